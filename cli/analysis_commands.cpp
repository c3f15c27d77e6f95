// `tbdprof report|compare|diff|check`: the option tables, the progress line and the output of the
// analyzer's reports (analyze_trace, render_*, check_budget).
#include "subcommands.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tbdprof/cmdline/command.h>
#include <tbdprof/cmdline/terminal.h>
#include <tbdprof/trace/output_file.h>
#include <tbdprof/trace/safe_text.h>

#include <tbdprof/analyzer/analyze.h>
#include <tbdprof/analyzer/budget.h>
#include <tbdprof/analyzer/render.h>
#include <tbdprof/analyzer/whatif_check.h>

#include <tbdprof/analyzer/whatif.h>
#include "analysis_options.h"
#include "heap_reuse.h"
#include "progress_callbacks.h"

namespace tbdprof::cli {
// The code moved here from the analyzer with the option tables; it names the analyzer's types as
// it did there.
using namespace tbdprof::analyzer;

// `tbdprof check`'s status for a trace it could not read now (a lock held by a writer): a CI gate
// must not take it for bad input (2) nor for a budget violated (1).
constexpr int kCheckCouldNotRead = 3;

namespace {

const std::vector<std::string> kFormats = {"text", "markdown", "json", "html"};

// What report, compare and diff share: the analysis options, the output, its format.
struct Common {
    AnalysisOptions analysis;
    AnalysisWords words;
    std::string format_name = "text";
    Format format = Format::text;
    std::string output;
    bool force = false;  // --force: replace an existing output file
    bool quiet = false;  // --quiet: no progress line
    bool wide = false;   // --wide: text not fitted to the width

    bool to_terminal() const { return (output.empty() || output == "-") && cmdline::is_terminal(stdout); }
    // The width the text format fits: the terminal's (or COLUMNS, or 100); 0 with --wide.
    size_t text_width() const {
        return wide ? 0
                    : static_cast<size_t>(cmdline::output_width(output.empty() || output == "-" ? stdout : nullptr));
    }
    // Text for where it goes: bold headings on a colour terminal.
    std::string styled(std::string text) const {
        return format == Format::text && to_terminal() && cmdline::use_colour(stdout) ? cmdline::bold_headings(text)
                                                                                      : text;
    }
};

void add_common(cmdline::Command& command, Common& common) {
    command.add_format(common.format_name, kFormats, "text (default), markdown, json or html");
    command.add_output(common.output);
    command.add_force(common.force);
    command.add_quiet(common.quiet, "no progress line on a terminal");
    command.add_wide(common.wide);
    add_analysis_options(command.app(), common.words);
}

// After parsing: the values checked; returns an error sentence.
std::string apply_common(cmdline::Command& command, Common& common) {
    common.analysis.progress = analysis_progress(common.quiet);
    if (std::string error = apply_format_option(common.format, common.format_name); !error.empty()) return error;
    return apply_analysis_options(command.app(), common.words, common.analysis);
}

// Strings from the trace reach the output unchanged by the renderers: a terminal must not act on
// their control characters, and JSON/HTML must be valid UTF-8 (tbdprof/trace/safe_text.h).
std::string safe_for(Format format, const std::string& text) {
    return format == Format::text || format == Format::markdown ? trace::printable(text) : trace::valid_utf8(text);
}

// Before the analysis, which may take a while: can -o be written at all?
std::string output_problem(const Common& common, const std::vector<std::string>& inputs) {
    if (common.output.empty() || common.output == "-") return {};
    return trace::check_output_target(
        common.output, {.force = common.force, .inputs = inputs, .allow_stream = true, .defer_temporary = false});
}

std::string base_name(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Parses and checks the common options; nullopt: go on.
std::optional<int> parse_common(cmdline::Command& command, Common& common, int argc, char** argv) {
    if (const auto status = command.parse(argc, argv)) return status;
    if (std::string error = apply_common(command, common); !error.empty()) return command.usage_error(error);
    return std::nullopt;
}

// Renders (reading the traces inside `render`, which may throw) and writes the result to -o FILE or
// stdout, styled for a terminal: 0, or the one failure message and 2. Shared by report, compare, diff.
template <typename Render>
int render_and_write(cmdline::Command& command, const Common& common, const std::vector<std::string>& inputs,
                     Render render) {
    try {
        const std::string text = common.styled(safe_for(common.format, render()));
        if (std::string error = write_output(common.output, text, common.force, inputs); !error.empty())
            return command.fail(error, 2);
    } catch (const std::exception& e) {
        return command.fail(e.what(), 2);
    }
    return 0;
}

}  // namespace

int report_command(int argc, char** argv) {
    cmdline::Command command("report",
                             "tbdprof report TRACE [--format text|markdown|json|html] [-o FILE] [--window W] ...",
                             "A report on one trace: GPU utilization, FP32 throughput, memory by category,\n"
                             "iterations, CPU, top kernels.");
    Common common;
    add_common(command, common);
    // For tbdprof fleet, which compares ranks recorded in separate traces (docs/fleet.md); off by default
    // so that a report stays as it was.
    command.app().add_flag("--collective-durations", common.analysis.collective_durations,
                           "json: each rank's communication kernel durations in the window (ns, start order)");
    if (const auto status = parse_common(command, common, argc, argv)) return *status;
    const std::vector<std::string>& inputs = command.positional();
    if (inputs.size() != 1) return command.usage_error("give exactly one trace file (see tbdprof report --help)");
    if (std::string error = output_problem(common, inputs); !error.empty()) return command.fail(error, 2);
    keep_freed_heap_for_reuse();  // the rows read for one section, freed, then the next section's
    return render_and_write(command, common, inputs, [&] {
        return render_report(analyze_trace(inputs[0], common.analysis), common.format, common.text_width());
    });
}

int compare_command(int argc, char** argv) {
    cmdline::Command command(
        "compare", "tbdprof compare A B [C...] [--labels a,b,...] [--format text|markdown|json|html] [-o FILE]",
        "Several runs side by side: a table per metric and per memory category;\n"
        "stacked bars of memory at peak in HTML.");
    Common common;
    add_common(command, common);
    std::string label_list;
    command.app().add_option("--labels", label_list, "column names (default: file names)")->option_text("a,b,...");
    if (const auto status = parse_common(command, common, argc, argv)) return *status;
    const std::vector<std::string>& inputs = command.positional();
    if (inputs.size() < 2) return command.usage_error("give at least two trace files (see tbdprof compare --help)");
    std::vector<std::string> labels;
    if (command.app().count("--labels") > 0) {
        size_t start = 0;
        while (start <= label_list.size()) {
            const size_t comma = label_list.find(',', start);
            labels.push_back(label_list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    if (!labels.empty() && labels.size() != inputs.size())
        return command.usage_error("--labels has " + std::to_string(labels.size()) + " names for " +
                                   std::to_string(inputs.size()) + " traces");
    if (std::string error = output_problem(common, inputs); !error.empty()) return command.fail(error, 2);
    if (labels.empty()) {
        for (size_t i = 0; i < inputs.size(); ++i) {
            std::string label = base_name(inputs[i]);
            for (size_t j = 0; j < i; ++j)
                if (labels[j] == label) label += " (" + std::to_string(i + 1) + ")";
            labels.push_back(label);
        }
    }
    return render_and_write(command, common, inputs, [&] {
        std::vector<Report> reports;
        for (const std::string& path : inputs) reports.push_back(analyze_trace(path, common.analysis));
        return render_compare(reports, labels, common.format, common.text_width());
    });
}

int diff_command(int argc, char** argv) {
    cmdline::Command command("diff", "tbdprof diff BASE NEW [--format text|markdown|json|html] [-o FILE]",
                             "What changed between two runs (metrics, memory categories, top kernels),\n"
                             "with relative changes, largest first.");
    Common common;
    common.analysis.top_kernels = 30;  // compare kernels beyond the usual top ten
    add_common(command, common);
    if (const auto status = parse_common(command, common, argc, argv)) return *status;
    const std::vector<std::string>& inputs = command.positional();
    if (inputs.size() != 2) return command.usage_error("give exactly two trace files: BASE NEW");
    if (std::string error = output_problem(common, inputs); !error.empty()) return command.fail(error, 2);
    return render_and_write(command, common, inputs, [&] {
        const Report base = analyze_trace(inputs[0], common.analysis);
        const Report next = analyze_trace(inputs[1], common.analysis);
        return render_diff(base, next, common.format, common.text_width());
    });
}

namespace {

constexpr const char* kCheckUsage =
    "tbdprof check TRACE [--max-peak-memory 12GiB] [--min-gpu-utilization 0.8] [--max-iteration-time 250ms]\n"
    "       [--max-p95-iteration-time T] [--min-fp32-utilization F] [--max-category CATEGORY=SIZE]\n"
    "       [--max-exposed-communication F] [--max-rank-imbalance RATIO]\n"
    "       [--require-plausible-tags] [--budget FILE] [--junit FILE] [--whatif \"WHATIF-OPTIONS\"]";

constexpr const char* kCheckDescription =
    "Checks a trace against limits. Exit status 0: within budget; 1: outside it (each\n"
    "violation listed); 2: bad input; 3: the trace could not be read now (locked by a program\n"
    "writing it). A budget file holds the same limits, one per line:\n"
    "    max-peak-memory = 12GiB\n    max-category activations=8GiB\n    require-plausible-tags\n"
    "--max-iteration-time limits the mean iteration time. --max-exposed-communication limits\n"
    "the time only communication runs, as a share of the window, on the worst rank;\n"
    "--max-rank-imbalance the ranks' max / median computation time. --require-plausible-tags fails\n"
    "when the memory tags contradict a training run (the report's memory warning) or\n"
    "were not checked (an untagged trace). --whatif judges the memory limits on the\n"
    "predicted peak of a planned configuration (tbdprof whatif's options, docs/whatif.md),\n"
    "with the model's error to spare (3%; 10% where a caching pool's replay does not give back\n"
    "the recorded segments).";

// The limits given as options; each may be given once, --max-category once per category.
constexpr std::pair<const char*, const char*> kLimitOptions[] = {
    {"max-peak-memory", "SIZE"},        {"min-gpu-utilization", "F"},   {"max-iteration-time", "T"},
    {"max-p95-iteration-time", "T"},    {"min-fp32-utilization", "F"},  {"max-category", "CATEGORY=SIZE"},
    {"max-exposed-communication", "F"}, {"max-rank-imbalance", "RATIO"}};

// `tbdprof check`'s options as parsed, before they are turned into a Budget.
struct CheckOptions {
    Common common;
    std::string budget_file;
    std::string junit;
    std::string whatif;
    bool require_plausible_tags = false;
    std::vector<std::vector<std::string>> limit_values =
        std::vector<std::vector<std::string>>(std::size(kLimitOptions));

    bool has_whatif(cmdline::Command& command) const { return command.app().count("--whatif") > 0; }
};

void add_check_options(cmdline::Command& command, CheckOptions& options) {
    CLI::App& app = command.app();
    app.add_option("--budget", options.budget_file, "a file of limits, one per line")->option_text("FILE");
    app.add_option("--junit", options.junit, "also write the results as a JUnit XML file (for CI)")
        ->option_text("FILE");
    app.add_option("--whatif", options.whatif, "memory limits on the predicted peak with these tbdprof whatif options")
        ->option_text("\"OPTIONS\"");
    app.add_flag("--require-plausible-tags", options.require_plausible_tags,
                 "fail when the memory tags contradict a training run (no weights, no gradients, no update, "
                 "one category holding nearly all bytes) or could not be checked");
    command.add_force(options.common.force);
    command.add_quiet(options.common.quiet, "no progress line on a terminal");
    add_analysis_options(app, options.common.words);
    for (size_t i = 0; i < std::size(kLimitOptions); ++i)
        app.add_option(std::string("--") + kLimitOptions[i].first, options.limit_values[i], "limit")
            ->option_text(kLimitOptions[i].second);
}

// The budget file's limits, then the options' (an option given twice is an error apply_limit reports).
std::string collect_budget(const CheckOptions& options, Budget& budget) {
    if (!options.budget_file.empty())
        if (std::string error = load_budget_file(options.budget_file, budget); !error.empty()) return error;
    for (size_t i = 0; i < std::size(kLimitOptions); ++i)
        for (const std::string& value : options.limit_values[i])
            if (std::string error = apply_limit(budget, kLimitOptions[i].first, value); !error.empty()) return error;
    if (options.require_plausible_tags) budget.require_plausible_tags = true;
    return {};
}

// With --whatif the memory limits judge the planned configuration's predicted peak, the others the
// recorded run; without, every limit judges the recorded run.
std::vector<CheckResult> evaluate_budget(const std::string& trace_path, const Common& common, const Budget& budget,
                                         const std::optional<WhatIfOptions>& planned) {
    std::vector<CheckResult> results;
    const Budget recorded = planned ? without_memory_limits(budget) : budget;
    if (!recorded.empty()) results = check_budget(analyze_trace(trace_path, common.analysis), recorded);
    if (planned)
        for (CheckResult& r : check_whatif_memory(trace_path, *planned, budget)) results.push_back(std::move(r));
    return results;
}

// One line per limit; the number violated.
int print_check_lines(const std::vector<CheckResult>& results) {
    int violations = 0;
    for (const CheckResult& r : results) {
        if (!r.passed) ++violations;
        fmt::print("{}  {:<24} {}\n", r.passed ? "ok  " : "FAIL", r.limit, trace::printable(r.message));
    }
    return violations;
}

// The verdict line; the exit status (0 within budget, 1 outside it).
int print_check_verdict(int violations, size_t limits) {
    if (violations > 0) {
        fmt::print("{} of {} limits violated\n", violations, limits);
        return 1;
    }
    fmt::print("within budget ({} limits)\n", limits);
    return 0;
}

}  // namespace

int check_command(int argc, char** argv) {
    cmdline::Command command("check", kCheckUsage, kCheckDescription);
    CheckOptions options;
    Common& common = options.common;
    add_check_options(command, options);
    if (const auto status = command.parse(argc, argv)) return *status;
    const std::vector<std::string>& inputs = command.positional();
    if (inputs.size() != 1) return command.usage_error("give exactly one trace file (see tbdprof check --help)");
    Budget budget;
    if (std::string error = collect_budget(options, budget); !error.empty()) return command.usage_error(error);
    if (std::string error = apply_analysis_options(command.app(), common.words, common.analysis); !error.empty())
        return command.usage_error(error);
    common.analysis.progress = analysis_progress(common.quiet);
    if (budget.empty()) return command.usage_error("no limits given (options or --budget FILE)");
    std::optional<WhatIfOptions> planned;
    if (options.has_whatif(command)) {
        planned.emplace();
        if (std::string error = parse_whatif_words(options.whatif, *planned); !error.empty())
            return command.usage_error(error);
        if (!budget.max_peak_memory && budget.max_category.empty())
            return command.usage_error("--whatif needs --max-peak-memory or --max-category (the limits it judges)");
    }
    std::vector<CheckResult> results;
    try {
        results = evaluate_budget(inputs[0], common, budget, planned);
    } catch (const std::invalid_argument& e) {
        return command.usage_error(std::string("--whatif: ") + e.what());
    } catch (const TraceError& e) {
        return command.fail(e.what(), e.busy() ? kCheckCouldNotRead : 2);
    } catch (const std::exception& e) {
        return command.fail(e.what(), 2);
    }
    const int violations = print_check_lines(results);
    if (!options.junit.empty())
        if (std::string error =
                write_output(options.junit, trace::valid_utf8(junit_xml(inputs[0], results)), common.force, inputs);
            !error.empty())
            return command.fail(error, 2);
    return print_check_verdict(violations, results.size());
}

}  // namespace tbdprof::cli
