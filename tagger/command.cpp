// `tbdprof tag TRACE [--iteration-range NAME]`: runs the tagger again on an existing trace.
#include "tbdprof/tagger/tagger.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace tbdprof::tagger {

int tag_command(int argc, char** argv) {
    TagOptions options;
    std::string trace, explain;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::printf("usage: tbdprof tag TRACE [--iteration-range NAME|PREFIX|PATTERN] [--explain ID|ADDRESS]\n"
                        "Tags every device allocation of TRACE with a memory category and stores the\n"
                        "result, with iterations and phases, in the trace. --iteration-range takes an\n"
                        "NVTX range name, a prefix ('Train step') or a pattern with * and ?.\n"
                        "--explain prints why an allocation (id, or a 0x address it contained) and the\n"
                        "tensors inside it got their category: the rule, the confidence, the evidence.\n");
            return 0;
        }
        if (arg == "--iteration-range" || arg.rfind("--iteration-range=", 0) == 0) {
            if (arg == "--iteration-range") {
                if (i + 1 >= argc) {
                    std::fprintf(stderr, "tbdprof tag: --iteration-range needs a range name\n");
                    return 2;
                }
                options.iteration_range = argv[++i];
            } else {
                options.iteration_range = arg.substr(std::strlen("--iteration-range="));
            }
        } else if (arg == "--explain" || arg.rfind("--explain=", 0) == 0) {
            if (arg == "--explain") {
                if (i + 1 >= argc) {
                    std::fprintf(stderr, "tbdprof tag: --explain needs an allocation id or a 0x address\n");
                    return 2;
                }
                explain = argv[++i];
            } else {
                explain = arg.substr(std::strlen("--explain="));
            }
        } else if (!arg.empty() && arg[0] == '-') {
            std::fprintf(stderr, "tbdprof tag: unknown option '%s' (see tbdprof tag --help)\n", arg.c_str());
            return 2;
        } else if (trace.empty()) {
            trace = arg;
        } else {
            std::fprintf(stderr, "tbdprof tag: one trace at a time ('%s' is extra)\n", arg.c_str());
            return 2;
        }
    }
    if (trace.empty()) {
        std::fprintf(stderr, "tbdprof tag: no trace given (usage: tbdprof tag TRACE)\n");
        return 2;
    }
    TagSummary summary;
    std::string error;
    if (!tag_trace_file(trace, options, summary, error)) {
        std::fprintf(stderr, "tbdprof tag: %s\n", error.c_str());
        return 1;
    }
    if (summary.iterations)
        std::printf("%zu allocations tagged; %zu iterations (from %s)\n", summary.allocations, summary.iterations,
                    summary.iteration_source.c_str());
    else
        std::printf("%zu allocations tagged; no iterations: %s\n", summary.allocations, summary.note.c_str());
    if (summary.segments_with_subranges)
        std::printf("note: the program allocates pooled segments (a caching allocator); %zu tensors inside %zu\n"
                    "      segments were recovered from pointer arguments and tagged (allocation_subranges)\n",
                    summary.subranges, summary.segments_with_subranges);
    if (summary.segment_level)
        std::printf("note: the program allocates pooled segments (a caching allocator); the breakdown is at\n"
                    "      segment level for those. With PyTorch, record with --framework=pytorch.\n");
    for (const auto& [category, bytes] : summary.bytes_by_category)
        std::printf("  %-16s %14lld bytes\n", category.c_str(), static_cast<long long>(bytes));
    if (!explain.empty()) {
        std::printf("\n");
        if (!explain_allocation(trace, explain, error)) {
            std::fprintf(stderr, "tbdprof tag: %s\n", error.c_str());
            return 1;
        }
    }
    return 0;
}

}  // namespace tbdprof::tagger
