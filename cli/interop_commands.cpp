// `tbdprof import|export`: the option tables, the progress line and the summaries of interop's
// import_trace_file and export_chrome_trace.
#include "subcommands.h"

#include <fmt/format.h>

#include <tbdprof/cmdline/command.h>
#include <tbdprof/trace/safe_text.h>

#include <tbdprof/interop/export.h>
#include <tbdprof/interop/import.h>

#include "heap_reuse.h"
#include "progress_callbacks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::cli {
// The code moved here from interop with the option tables; it names interop's types as it did there.
using namespace tbdprof::interop;

namespace {

// trace.pt.trace.json.gz -> trace.pt.trace.sqlite
std::string default_import_output(std::string input) {
    for (std::string_view suffix : {".gz", ".json"}) {
        if (input.ends_with(suffix)) input.resize(input.size() - suffix.size());
    }
    return input + ".sqlite";
}

std::string default_export_output(std::string input) {
    if (input.ends_with(".sqlite")) input.resize(input.size() - 7);
    return input + ".chrome.json";
}

}  // namespace

int import_command(int argc, char** argv) {
    cmdline::Command command(
        "import", "tbdprof import TRACE.json[.gz] [-o OUT.sqlite] [--force] [--quiet] [--max-json-size SIZE]",
        "Converts a PyTorch profiler (Kineto) / Chrome trace JSON, or a torch.profiler\n"
        "memory-timeline raw export, into a tbdprof trace. TRACE may be a FIFO, a pipe\n"
        "(/dev/stdin) or - for stdin, with -o.");
    std::string output;
    bool quiet = false, force = false;
    uint64_t max_json_bytes = 0;
    command.add_output(output, "the trace to write (default: the input name with .sqlite)");
    command.add_force(force);
    command.add_quiet(quiet, "no progress line and no summary");
    command.app()
        .add_option("--max-json-size", max_json_bytes,
                    "read at most SIZE bytes of JSON (decompressed), instead of the default caps: 4 GiB, and a\n"
                    "gzip stream at most 100 times its compressed size (against decompression bombs)")
        ->transform(CLI::AsSizeValue(false))
        ->option_text("SIZE");
    if (const auto status = command.parse(argc, argv)) return *status;
    if (command.positional().size() != 1)
        return command.usage_error("give one trace to import (see tbdprof import --help for usage)");
    const std::string& input = command.positional()[0];
    if (output.empty()) {
        // A pipe has no name to derive one from (/dev/stdin.sqlite, or the FIFO's name reused).
        struct stat st {};
        if (input == "-" || (::stat(input.c_str(), &st) == 0 && !S_ISREG(st.st_mode)))
            return command.usage_error("give -o OUT.sqlite when importing from a pipe or FIFO (" + input + ")");
        output = default_import_output(input);
    }
    keep_freed_heap_for_reuse();  // the parsed events, the rows and the tagger's arrays in turn
    ImportOptions options;
    options.progress = import_progress(quiet);
    options.force = force;
    options.max_json_bytes = max_json_bytes;
    try {
        const ImportSummary summary = import_trace_file(input, output, options);
        if (!quiet) {
            fmt::print("{}\n", summary.summary_line());
            if (!summary.tagged)
                fmt::print("memory not tagged: {} (run `tbdprof tag` to retry)\n", trace::printable(summary.tag_error));
            else if (summary.pytorch_categories > 0)
                fmt::print(
                    "memory tagged: {} allocations keep PyTorch's category, the others by lifetimes and ranges\n",
                    summary.pytorch_categories);
            else
                fmt::print("memory tagged by lifetimes and named ranges (lower confidence: no kernel arguments)\n");
            fmt::print("wrote {} ({:.1f} MB of JSON in {:.2f} s: {:.0f} MB/s parsing, {:.2f} s in all)\n", output,
                       static_cast<double>(summary.json_bytes) / 1e6, summary.parse_seconds,
                       static_cast<double>(summary.json_bytes) / 1e6 / std::max(summary.parse_seconds, 1e-9),
                       summary.total_seconds);
        }
        return 0;
    } catch (const std::exception& e) {
        return command.fail(e.what(), 1);
    }
}

int export_command(int argc, char** argv) {
    cmdline::Command command("export",
                             "tbdprof export TRACE.sqlite [--format chrome] [-o OUT.json] [--force] [--quiet]",
                             "Writes Chrome trace JSON that Perfetto UI (ui.perfetto.dev) and chrome://tracing open.");
    std::string output, format = "chrome";
    bool force = false, quiet = false;
    command.add_format(format, {"chrome", "perfetto"}, "chrome (default; perfetto is the same JSON)");
    command.add_output(output, "the file to write (default: the trace name with .chrome.json)");
    command.add_force(force);
    command.add_quiet(quiet, "no summary line");
    if (const auto status = command.parse(argc, argv)) return *status;
    if (command.positional().size() != 1)
        return command.usage_error("give one trace to export (see tbdprof export --help for usage)");
    const std::string& input = command.positional()[0];
    if (output.empty()) output = default_export_output(input);
    try {
        const ExportSummary summary = export_chrome_trace(input, output, force);
        if (!quiet)
            fmt::print("wrote {}: {} slices, {} flows, {} counter events, {} instant events ({:.1f} MB)\n", output,
                       summary.slices, summary.flows, summary.counter_events, summary.instant_events,
                       static_cast<double>(summary.bytes_written) / 1e6);
        return 0;
    } catch (const std::exception& e) {
        return command.fail(e.what(), 1);
    }
}

}  // namespace tbdprof::cli
