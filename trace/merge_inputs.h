// What `tbdprof merge` needs to know of each input before writing anything: that it is a trace, its
// ranks, its run row, its collectives; and the checks and clock offsets made from those.
#pragma once

#include "merge_clock.h"
#include "tbdprof/trace/merge.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace::merge {

struct ProcessRank {
    int64_t process = 0, rank = 0, local_rank = 0, world_size = 0;
};

struct InputFacts {
    std::string path;
    std::vector<ProcessRank> ranks;
    // An imported Kineto trace names its one process's rank in run notes (distributed.rank), not in
    // process_ranks; merged, it gets a process_ranks row (the notes of several inputs would collide).
    bool ranks_from_notes = false;
    std::string command_line, host, clock_source;
    int64_t start_unix_ns = 0, start_monotonic_ns = 0, duration_ns = 0, host_timed_kernels = 0;
    int64_t truncated_files = 0, processes = 0, kernels = 0;
    // The earliest process start, kernel, allocation or call (own clock); none: no such rows.
    std::optional<int64_t> earliest_ns;
    bool simulated_device = false;
    std::optional<int64_t> exit_status, crash_signal;
    std::vector<CommunicatorSequence> collectives;
};

// Opens and reads one input; throws MergeError ("PATH: why") when it is not a tbdprof trace.
InputFacts read_input(const std::string& path);
// Throws MergeError for the same file twice, the same rank in two inputs, or different world sizes.
void check_inputs(const std::vector<InputFacts>& inputs);
// Each input's offset onto the first input's clock, from the collectives it shares with one already
// aligned; throws MergeError naming the inputs that share none.
std::vector<MergedInput> align_clocks(const std::vector<InputFacts>& inputs);

}  // namespace tbdprof::trace::merge
