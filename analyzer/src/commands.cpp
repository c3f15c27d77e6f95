#include "tbdprof/analyzer/commands.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>

#include <tbdprof/trace/output_file.h>
#include <tbdprof/trace/safe_text.h>

#include "command_options.h"
#include "tbdprof/analyzer/budget.h"

namespace tbdprof::analyzer {
namespace {

constexpr const char* kAnalysisHelp =
    "  --window steady|iterations|all  analysis window (default steady: every iteration but the first;\n"
    "                                  the whole run when there are no iterations)\n"
    "  --iteration-range NAME          ranges with this name mark iterations\n"
    "  --batch-size N                  samples per iteration, for samples/s\n"
    "  --top N                         kernels in the top list (default 10)\n";

int usage_error(const char* command, const std::string& message, const char* usage) {
    std::fprintf(stderr, "tbdprof %s: %s\nusage: %s\n(--help for details)\n", command, message.c_str(), usage);
    return 2;
}

int input_error(const char* command, const std::string& message) {
    std::fprintf(stderr, "tbdprof %s: %s\n", command, trace::printable(message).c_str());
    return 2;
}

struct Common {
    AnalysisOptions analysis;
    Format format = Format::text;
    std::string output;
    bool force = false;  // --force: replace an existing output file
};

// Applies the options all reading commands share; returns an error sentence.
std::string apply_common(Common& common, const ParsedArgs& args) {
    common.analysis.progress = ::isatty(STDERR_FILENO) == 1;
    for (const auto& [name, value] : args.options) {
        std::string error;
        if (name == "format") error = apply_format_option(common.format, value);
        else if (name == "output") common.output = value;
        else if (name == "force") common.force = true;
        else error = apply_analysis_option(common.analysis, name, value);
        if (!error.empty()) return error;
    }
    return {};
}

// Strings from the trace reach the output unchanged by the renderers: a terminal must not act on
// their control characters, and JSON/HTML must be valid UTF-8 (tbdprof/trace/safe_text.h).
std::string safe_for(Format format, const std::string& text) {
    return format == Format::text || format == Format::markdown ? trace::printable(text) : trace::valid_utf8(text);
}

// Before the analysis, which may take a while: can -o be written at all?
std::string output_problem(const Common& common, const std::vector<std::string>& inputs) {
    if (common.output.empty() || common.output == "-") return {};
    return trace::check_output_target(common.output,
                                      {.force = common.force, .inputs = inputs, .allow_stream = true, .defer_temporary = false});
}

std::vector<std::string> names_with(std::vector<std::string> extra) {
    std::vector<std::string> names = kAnalysisOptionNames;
    names.insert(names.end(), extra.begin(), extra.end());
    return names;
}

std::string base_name(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int report_command(int argc, char** argv) {
    const char* usage = "tbdprof report TRACE [--format text|markdown|json|html] [-o FILE] [--window W] ...";
    const ParsedArgs args = parse_args(argc, argv, names_with({"format", "output"}), {"force"});
    if (args.help) {
        std::printf("usage: %s\n\nA report on one trace: GPU utilization, FP32 throughput, memory by category,\n"
                    "iterations, CPU, top kernels.\n  --format F   text (default), markdown, json, html\n"
                    "  -o FILE      write to FILE instead of standard output\n"
                    "  --force      replace FILE if it exists (never a device, FIFO or an input)\n%s", usage, kAnalysisHelp);
        return 0;
    }
    if (!args.error.empty()) return usage_error("report", args.error, usage);
    if (args.positional.size() != 1) return usage_error("report", "give exactly one trace file", usage);
    Common common;
    if (std::string error = apply_common(common, args); !error.empty()) return usage_error("report", error, usage);
    if (std::string error = output_problem(common, args.positional); !error.empty()) return input_error("report", error);
    try {
        const Report report = analyze_trace(args.positional[0], common.analysis);
        if (std::string error = write_output(common.output, safe_for(common.format, render_report(report, common.format)), common.force, args.positional); !error.empty()) {
            return input_error("report", error);
        }
    } catch (const std::exception& e) {
        return input_error("report", e.what());
    }
    return 0;
}

int compare_command(int argc, char** argv) {
    const char* usage = "tbdprof compare A B [C...] [--labels a,b,...] [--format text|markdown|json|html] [-o FILE]";
    const ParsedArgs args = parse_args(argc, argv, names_with({"format", "output", "labels"}), {"force"});
    if (args.help) {
        std::printf("usage: %s\n\nSeveral runs side by side: a table per metric and per memory category;\n"
                    "stacked bars of memory at peak in HTML.\n  --labels a,b,...  column names (default: file names)\n%s",
                    usage, kAnalysisHelp);
        return 0;
    }
    if (!args.error.empty()) return usage_error("compare", args.error, usage);
    if (args.positional.size() < 2) return usage_error("compare", "give at least two trace files", usage);
    Common common;
    std::vector<std::string> labels;
    for (const auto& [name, value] : args.options) {
        if (name != "labels") continue;
        size_t start = 0;
        while (start <= value.size()) {
            const size_t comma = value.find(',', start);
            labels.push_back(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    if (!labels.empty() && labels.size() != args.positional.size()) {
        return usage_error("compare", "--labels has " + std::to_string(labels.size()) + " names for " +
                                          std::to_string(args.positional.size()) + " traces", usage);
    }
    if (std::string error = apply_common(common, args); !error.empty()) return usage_error("compare", error, usage);
    if (std::string error = output_problem(common, args.positional); !error.empty()) return input_error("compare", error);
    if (labels.empty()) {
        for (size_t i = 0; i < args.positional.size(); ++i) {
            std::string label = base_name(args.positional[i]);
            for (size_t j = 0; j < i; ++j)
                if (labels[j] == label) label += " (" + std::to_string(i + 1) + ")";
            labels.push_back(label);
        }
    }
    try {
        std::vector<Report> reports;
        for (const std::string& path : args.positional) reports.push_back(analyze_trace(path, common.analysis));
        if (std::string error = write_output(common.output, safe_for(common.format, render_compare(reports, labels, common.format)), common.force,
                                                 args.positional); !error.empty()) {
            return input_error("compare", error);
        }
    } catch (const std::exception& e) {
        return input_error("compare", e.what());
    }
    return 0;
}

int diff_command(int argc, char** argv) {
    const char* usage = "tbdprof diff BASE NEW [--format text|markdown|json|html] [-o FILE]";
    const ParsedArgs args = parse_args(argc, argv, names_with({"format", "output"}), {"force"});
    if (args.help) {
        std::printf("usage: %s\n\nWhat changed between two runs (metrics, memory categories, top kernels),\n"
                    "with relative changes, largest first.\n%s", usage, kAnalysisHelp);
        return 0;
    }
    if (!args.error.empty()) return usage_error("diff", args.error, usage);
    if (args.positional.size() != 2) return usage_error("diff", "give exactly two trace files: BASE NEW", usage);
    Common common;
    common.analysis.top_kernels = 30;  // compare kernels beyond the usual top ten
    if (std::string error = apply_common(common, args); !error.empty()) return usage_error("diff", error, usage);
    if (std::string error = output_problem(common, args.positional); !error.empty()) return input_error("diff", error);
    try {
        const Report base = analyze_trace(args.positional[0], common.analysis);
        const Report next = analyze_trace(args.positional[1], common.analysis);
        if (std::string error = write_output(common.output, safe_for(common.format, render_diff(base, next, common.format)), common.force, args.positional); !error.empty()) {
            return input_error("diff", error);
        }
    } catch (const std::exception& e) {
        return input_error("diff", e.what());
    }
    return 0;
}

int check_command(int argc, char** argv) {
    const char* usage =
        "tbdprof check TRACE [--max-peak-memory 12GiB] [--min-gpu-utilization 0.8] [--max-iteration-time 250ms]\n"
        "       [--max-p95-iteration-time T] [--min-fp32-utilization F] [--max-category CATEGORY=SIZE]\n"
        "       [--budget FILE] [--junit FILE]";
    const ParsedArgs args =
        parse_args(argc, argv,
                   names_with({"max-peak-memory", "min-gpu-utilization", "max-iteration-time", "max-p95-iteration-time",
                               "min-fp32-utilization", "max-category", "budget", "junit"}),
                   {"force"});
    if (args.help) {
        std::printf("usage: %s\n\nChecks a trace against limits. Exit status 0: within budget; 1: outside it (each\n"
                    "violation listed); 2: bad input. A budget file holds the same limits, one per line:\n"
                    "    max-peak-memory = 12GiB\n    max-category activations=8GiB\n"
                    "--max-iteration-time limits the mean iteration time.\n%s", usage, kAnalysisHelp);
        return 0;
    }
    if (!args.error.empty()) return usage_error("check", args.error, usage);
    if (args.positional.size() != 1) return usage_error("check", "give exactly one trace file", usage);
    Common common;
    Budget budget;
    std::string junit;
    bool force = false;
    for (const auto& [name, value] : args.options) {
        std::string error;
        if (name == "force") force = true;
        else if (name == "budget") error = load_budget_file(value, budget);
        else if (name == "junit") junit = value;
        else if (is_limit_name(name)) error = apply_limit(budget, name, value);
        else error = apply_analysis_option(common.analysis, name, value);
        if (!error.empty()) return usage_error("check", error, usage);
    }
    common.analysis.progress = ::isatty(STDERR_FILENO) == 1;
    if (budget.empty()) return usage_error("check", "no limits given (options or --budget FILE)", usage);
    std::vector<CheckResult> results;
    try {
        results = check_budget(analyze_trace(args.positional[0], common.analysis), budget);
    } catch (const std::exception& e) {
        return input_error("check", e.what());
    }
    int violations = 0;
    for (const CheckResult& r : results) {
        if (!r.passed) ++violations;
        std::printf("%s  %-24s %s\n", r.passed ? "ok  " : "FAIL", r.limit.c_str(), trace::printable(r.message).c_str());
    }
    if (!junit.empty()) {
        if (std::string error = write_output(junit, trace::valid_utf8(junit_xml(args.positional[0], results)), force, args.positional); !error.empty()) {
            return input_error("check", error);
        }
    }
    if (violations > 0) {
        std::printf("%d of %zu limits violated\n", violations, results.size());
        return 1;
    }
    std::printf("within budget (%zu limits)\n", results.size());
    return 0;
}

}  // namespace tbdprof::analyzer
