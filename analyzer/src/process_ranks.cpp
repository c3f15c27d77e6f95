#include "process_ranks.h"

#include "tbdprof/analyzer/report.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

RecordedRanks read_recorded_ranks(const TraceFile& trace) {
    RecordedRanks ranks;
    if (!trace::has_table(trace.db, "process_ranks")) return ranks;
    for (const char* column : {"process", "rank", "world_size"})
        if (!trace::has_column(trace.db, "process_ranks", column)) return ranks;
    trace::Statement rows(trace.db, "SELECT process, rank, world_size FROM process_ranks");
    while (rows.step()) {
        if (!rows.is_null(1)) ranks.rank_of_process[rows.column_int(0)] = rows.column_int(1);
        if (!rows.is_null(2)) ranks.world_size = rows.column_int(2);
    }
    return ranks;
}

std::string process_memory_label(const ProcessMemory& p) {
    const std::string process = "process " + std::to_string(p.process);
    return p.rank ? "rank " + std::to_string(*p.rank) + " (" + process + ")" : process;
}

}  // namespace tbdprof::analyzer
