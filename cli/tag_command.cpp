// `tbdprof tag TRACE [--iteration-range NAME] [--explain ID]`: runs the tagger again on an existing trace.
#include "subcommands.h"

#include <tbdprof/cmdline/command.h>
#include <tbdprof/tagger/tagger.h>

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace tbdprof::cli {
// The code moved here from the tagger with the option table; it names the tagger's types as it did there.
using namespace tbdprof::tagger;

namespace {

void print_summary(const TagSummary& summary) {
    if (summary.iterations)
        fmt::print("{} allocations tagged; {} iterations (from {})\n", summary.allocations, summary.iterations,
                   summary.iteration_source);
    else
        fmt::print("{} allocations tagged; no iterations: {}\n", summary.allocations, summary.note);
    if (summary.segments_with_subranges)
        fmt::print(
            "note: {} tensors inside {} allocations holding several (pooled segments or\n"
            "      arenas) were recovered from pointer arguments and tagged (allocation_subranges)\n",
            summary.subranges, summary.segments_with_subranges);
    if (summary.segment_level)
        fmt::print(
            "note: some allocations addressed at many offsets (pooled segments or arenas) had no tensors\n"
            "      recovered from pointer arguments: the breakdown counts each whole, in one category.\n"
            "      With PyTorch, record with --framework=pytorch.\n");
    if (summary.operands_unresolved)
        fmt::print(
            "note: this trace was built before tbdprof stored which allocations copies and library calls\n"
            "      use, so their operands are unknown and tags are less reliable: rebuild it from its run\n"
            "      directory (`tbdprof build RUN_DIR -o OUT`) or record again\n");
    for (const auto& [category, bytes] : summary.bytes_by_category)
        fmt::print("  {:<16} {:>14} bytes\n", category, static_cast<long long>(bytes));
}

}  // namespace

int tag_command(int argc, char** argv) {
    cmdline::Command command(
        "tag", "tbdprof tag TRACE [--iteration-range NAME|PREFIX|PATTERN] [--explain ID|ADDRESS] [--quiet]",
        "Tags every device allocation of TRACE with a memory category and stores the\n"
        "result, with iterations and phases, in the trace.");
    TagOptions options;
    std::string explain;
    bool quiet = false;
    command.app()
        .add_option("--iteration-range", options.iteration_range,
                    "an NVTX range name, a prefix ('Train step') or a pattern with * and ?")
        ->option_text("NAME");
    command.app()
        .add_option("--explain", explain,
                    "print why an allocation (id, or a 0x address it contained) and the tensors inside it got their "
                    "category: the rule, the confidence, the evidence")
        ->option_text("ID");
    command.add_quiet(quiet, "no summary (the explanation of --explain is still printed)");
    if (const auto status = command.parse(argc, argv)) return *status;
    if (command.positional().empty()) return command.usage_error("no trace given (usage: tbdprof tag TRACE)");
    if (command.positional().size() > 1)
        return command.usage_error("one trace at a time ('" + command.positional()[1] + "' is extra)");
    const std::string& trace = command.positional()[0];
    try {
        const TagSummary summary = tag_trace_file(trace, options);
        if (!quiet) print_summary(summary);
        if (!explain.empty()) {
            if (!quiet) std::printf("\n");
            explain_allocation(trace, explain);
        }
    } catch (const TagError& e) {
        return command.fail(e.what(), 1);
    }
    return 0;
}

}  // namespace tbdprof::cli
