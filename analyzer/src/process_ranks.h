// The ranks a trace records for its processes (the process_ranks table a multi-process recording
// writes from the launcher's RANK and WORLD_SIZE). Shared by the communication and memory sections.
// Internal to the analyzer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "trace_file.h"

namespace tbdprof::analyzer {

struct RecordedRanks {
    std::map<int64_t, int64_t> rank_of_process;  // trace process id -> rank; processes without one absent
    std::optional<int64_t> world_size;           // the last world size the table gives
};

// Empty when the trace has no process_ranks table, or one without the columns tbdprof writes (a table
// not written by tbdprof names no ranks rather than failing the report).
RecordedRanks read_recorded_ranks(const TraceFile& trace);

}  // namespace tbdprof::analyzer
