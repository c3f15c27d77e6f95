#include "tbdprof/analyzer/device_memory.h"

#include <algorithm>

#include "analysis_parts.h"
#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

MemoryMetrics device_memory(const std::string& path, int64_t device) {
    return read_trace(path, [&](TraceFile& trace) {
        Report report;
        report.run.duration_ns = std::max<int64_t>(0, trace::read_run(trace.db).duration_ns);
        AnalysisOptions options;
        options.full_memory_timeline = true;
        options.memory_device = device;
        scan_memory(trace, options, report);
        return std::move(report.memory);
    });
}

}  // namespace tbdprof::analyzer
