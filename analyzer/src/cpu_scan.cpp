// CPU utilization of the traced processes over the window, from the collector's /proc samples of
// cumulative user + system time: CPU time spent inside the window / the part of the window the
// samples cover. 1.0 means one core busy all the time.
#include <algorithm>
#include <map>

#include "analysis_parts.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

struct Sample {
    int64_t ts, cpu;
};

// Cumulative CPU time at `t`, linear between samples, clamped to the sampled span.
double cumulative_at(const std::vector<Sample>& samples, int64_t t) {
    if (t <= samples.front().ts) return static_cast<double>(samples.front().cpu);
    if (t >= samples.back().ts) return static_cast<double>(samples.back().cpu);
    auto after = std::upper_bound(samples.begin(), samples.end(), t, [](int64_t v, const Sample& s) { return v < s.ts; });
    auto before = after - 1;
    const double span = static_cast<double>(after->ts - before->ts);
    const double fraction = span > 0 ? static_cast<double>(t - before->ts) / span : 0.0;
    return static_cast<double>(before->cpu) + fraction * static_cast<double>(after->cpu - before->cpu);
}

}  // namespace

void scan_cpu(const TraceFile& trace, Report& report) {
    std::map<int64_t, std::vector<Sample>> by_process;
    trace::RowReader<trace::CpuSampleRow> rows(trace.db);
    for (trace::CpuSampleRow row; rows.next(row);) by_process[row.process].push_back({row.ts_ns, row.user_ns + row.system_ns});

    const int64_t begin = report.window.begin_ns, end = report.window.end_ns;
    for (const auto& [process, samples] : by_process) {
        if (samples.size() < 2) continue;
        const int64_t covered_begin = std::max(begin, samples.front().ts);
        const int64_t covered_end = std::min(end, samples.back().ts);
        if (covered_end <= covered_begin) continue;
        const double cpu_ns = cumulative_at(samples, covered_end) - cumulative_at(samples, covered_begin);
        CpuProcess cpu;
        cpu.process = process;
        cpu.utilization = std::max(0.0, cpu_ns / static_cast<double>(covered_end - covered_begin));
        report.cpu.utilization += cpu.utilization;
        report.cpu.processes.push_back(cpu);
    }
    report.cpu.available = !report.cpu.processes.empty();
    if (!report.cpu.available) report.notes.push_back("no CPU samples cover the window: CPU utilization unknown");
}

}  // namespace tbdprof::analyzer
