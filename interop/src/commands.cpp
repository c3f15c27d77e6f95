#include "tbdprof/interop/commands.h"

#include <tbdprof/trace/safe_text.h>

#include "tbdprof/interop/export.h"
#include "tbdprof/interop/import.h"
#include "tbdprof/interop/interop_error.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::interop {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// trace.pt.trace.json.gz -> trace.pt.trace.sqlite
std::string default_import_output(std::string input) {
    for (std::string_view suffix : {".gz", ".json"}) {
        if (ends_with(input, suffix)) input.resize(input.size() - suffix.size());
    }
    return input + ".sqlite";
}

std::string default_export_output(std::string input) {
    if (ends_with(input, ".sqlite")) input.resize(input.size() - 7);
    return input + ".chrome.json";
}

int usage(const char* text) {
    std::fputs(text, stderr);
    return 2;
}

constexpr const char* kImportUsage =
    "usage: tbdprof import TRACE.json[.gz] [-o OUT.sqlite] [--force] [--quiet]\n"
    "  Converts a PyTorch profiler (Kineto) / Chrome trace JSON, or a torch.profiler memory-timeline raw\n"
    "  export, into a tbdprof trace. Default output: the input name with .sqlite.\n"
    "  --force: replace OUT if it exists (never the input, a device or a directory).\n";
constexpr const char* kExportUsage =
    "usage: tbdprof export TRACE.sqlite --format chrome [-o OUT.json] [--force]\n"
    "  Writes Chrome trace JSON that Perfetto UI (ui.perfetto.dev) and chrome://tracing open.\n"
    "  Default output: the trace name with .chrome.json. --force: replace OUT if it exists.\n";

}  // namespace

int import_command(int argc, char** argv) {
    std::string input, output;
    bool quiet = false, force = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::fputs(kImportUsage, stdout);
            return 0;
        } else if (arg == "-o" || arg == "--output") {
            if (++i >= argc) return usage(kImportUsage);
            output = argv[i];
        } else if (arg == "-q" || arg == "--quiet") {
            quiet = true;
        } else if (arg == "--force") {
            force = true;
        } else if (!arg.empty() && arg.front() == '-') {
            std::fprintf(stderr, "tbdprof import: unknown option %s\n", argv[i]);
            return usage(kImportUsage);
        } else if (input.empty()) {
            input = arg;
        } else {
            return usage(kImportUsage);
        }
    }
    if (input.empty()) return usage(kImportUsage);
    if (output.empty()) output = default_import_output(input);
    ImportOptions options;
    options.progress = !quiet && ::isatty(STDERR_FILENO) == 1;
    options.force = force;
    try {
        const ImportSummary summary = import_trace_file(input, output, options);
        if (!quiet) {
            std::printf("%s\n", summary.summary_line().c_str());
            std::printf("wrote %s (%.1f MB of JSON in %.2f s: %.0f MB/s parsing, %.2f s in all)\n", output.c_str(),
                        static_cast<double>(summary.json_bytes) / 1e6, summary.parse_seconds,
                        static_cast<double>(summary.json_bytes) / 1e6 / std::max(summary.parse_seconds, 1e-9),
                        summary.total_seconds);
        }
        return 0;
    } catch (const std::exception& e) {
        if (options.progress) std::fputs("\n", stderr);
        std::fprintf(stderr, "tbdprof import: %s\n", trace::printable(e.what()).c_str());
        return 1;
    }
}

int export_command(int argc, char** argv) {
    std::string input, output, format;
    bool force = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::fputs(kExportUsage, stdout);
            return 0;
        } else if (arg == "-o" || arg == "--output") {
            if (++i >= argc) return usage(kExportUsage);
            output = argv[i];
        } else if (arg == "--format" || arg == "-f") {
            if (++i >= argc) return usage(kExportUsage);
            format = argv[i];
        } else if (arg.starts_with("--format=")) {
            format = arg.substr(9);
        } else if (arg == "--force") {
            force = true;
        } else if (!arg.empty() && arg.front() == '-') {
            std::fprintf(stderr, "tbdprof export: unknown option %s\n", argv[i]);
            return usage(kExportUsage);
        } else if (input.empty()) {
            input = arg;
        } else {
            return usage(kExportUsage);
        }
    }
    if (input.empty()) return usage(kExportUsage);
    if (format.empty()) format = "chrome";
    if (format != "chrome" && format != "perfetto") {
        std::fprintf(stderr, "tbdprof export: unknown format '%s' (supported: chrome)\n", format.c_str());
        return 2;
    }
    if (output.empty()) output = default_export_output(input);
    try {
        const ExportSummary summary = export_chrome_trace(input, output, force);
        std::printf("wrote %s: %llu slices, %llu flows, %llu counter events, %llu instant events (%.1f MB)\n", output.c_str(),
                    static_cast<unsigned long long>(summary.slices), static_cast<unsigned long long>(summary.flows),
                    static_cast<unsigned long long>(summary.counter_events),
                    static_cast<unsigned long long>(summary.instant_events),
                    static_cast<double>(summary.bytes_written) / 1e6);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tbdprof export: %s\n", trace::printable(e.what()).c_str());
        return 1;
    }
}

}  // namespace tbdprof::interop
