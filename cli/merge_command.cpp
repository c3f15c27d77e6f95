// `tbdprof merge HOST_TRACE... -o OUT.sqlite`: the option table and the summary of
// trace::merge_traces (per-host traces of one distributed job made into one, clocks aligned).
#include "subcommands.h"

#include <fmt/format.h>

#include <tbdprof/cmdline/command.h>
#include <tbdprof/trace/merge.h>

#include <exception>
#include <string>
#include <vector>

namespace tbdprof::cli {

namespace {

void print_summary(const trace::MergeSummary& summary, const std::string& output) {
    for (size_t i = 0; i < summary.inputs.size(); ++i) {
        const trace::MergedInput& in = summary.inputs[i];
        std::string how = "the reference clock";
        if (in.aligned_to)
            how = fmt::format(
                "median of {} collective end difference(s) over {} rank pair(s) with input {}, {} within "
                "1 us of it, spread {:.3f} us",
                in.matched, in.rank_pairs, *in.aligned_to + 1, in.agreeing, static_cast<double>(in.spread_ns) / 1e3);
        else if (i > 0)
            how = "given with --offset-ns";
        fmt::print("input {} {}: {} process(es), {} kernel(s), clock offset {:+.6f} ms ({})\n", i + 1, in.path,
                   in.processes, in.kernels, static_cast<double>(in.offset_ns) / 1e6, how);
    }
    fmt::print("wrote {}: {} process(es), {} rank(s){}, {} kernel(s)\n", output, summary.processes, summary.ranks,
               summary.world_size ? fmt::format(" of world size {}", *summary.world_size) : "", summary.kernels);
}

}  // namespace

int merge_command(int argc, char** argv) {
    cmdline::Command command(
        "merge", "tbdprof merge HOST_TRACE... -o OUT.sqlite [--offset-ns NS]... [--force] [--quiet]",
        "Merges the traces of one distributed job recorded on several hosts into one trace with every\n"
        "process of every input. Each input's clock is moved onto the first input's by the median\n"
        "difference of the end times of the NCCL collectives they share (a collective ends at the same\n"
        "moment on every rank).");
    std::string output;
    bool force = false, quiet = false;
    std::vector<int64_t> offsets_ns;
    command.add_output(output, "the merged trace to write (required)");
    command.add_force(force);
    command.add_quiet(quiet, "no summary");
    command.app()
        .add_option("--offset-ns", offsets_ns,
                    "add NS nanoseconds to an input's times instead of aligning clocks from collectives;\n"
                    "give it once per input, in the inputs' order (the first one's included)")
        ->allow_extra_args(false)
        ->option_text("NS");
    if (const auto status = command.parse(argc, argv)) return *status;
    if (command.positional().size() < 2)
        return command.usage_error("give at least two traces to merge (see tbdprof merge --help for usage)");
    if (output.empty()) return command.usage_error("give -o OUT.sqlite, the merged trace to write");
    trace::MergeOptions options{
        .inputs = command.positional(), .output = output, .force = force, .offsets_ns = offsets_ns};
    try {
        const trace::MergeSummary summary = trace::merge_traces(options);
        if (!quiet) print_summary(summary, output);
        return 0;
    } catch (const std::exception& e) {
        return command.fail(e.what(), 1);
    }
}

}  // namespace tbdprof::cli
