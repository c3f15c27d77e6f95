// CPU utilization of the traced processes over the window, from the collector's /proc samples of
// cumulative user + system time: CPU time spent inside the window / the part of the window the
// samples cover. 1.0 means one core busy all the time. The samples are coarse (a reading every few
// tens of ms, each rounded down to a clock tick), so besides the interpolated figure the scan gives
// the bounds the readings allow, and says when those are too far apart for the figure to mean much.
#include <algorithm>
#include <map>
#include <numeric>

#include "analysis_parts.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

struct Sample {
    int64_t host_ns, cpu_ns;  // trace-relative sample time; cumulative CPU time at it
};

using SamplesByProcess = std::map<int64_t, std::vector<Sample>>;

// Linux reports process times in USER_HZ ticks, 100 per second, whatever the kernel's own HZ.
constexpr int64_t kUserHzTickNs = 10'000'000;

// Cumulative CPU time at `t`, linear between samples, clamped to the sampled span.
double cumulative_at(const std::vector<Sample>& samples, int64_t t) {
    if (t <= samples.front().host_ns) return static_cast<double>(samples.front().cpu_ns);
    if (t >= samples.back().host_ns) return static_cast<double>(samples.back().cpu_ns);
    auto after =
        std::upper_bound(samples.begin(), samples.end(), t, [](int64_t v, const Sample& s) { return v < s.host_ns; });
    auto before = after - 1;
    const double span = static_cast<double>(after->host_ns - before->host_ns);
    const double fraction = span > 0 ? static_cast<double>(t - before->host_ns) / span : 0.0;
    return static_cast<double>(before->cpu_ns) + fraction * static_cast<double>(after->cpu_ns - before->cpu_ns);
}

// The last sample at or before `t` and the first at or after it (`t` lies within the sampled span).
const Sample& sample_at_or_before(const std::vector<Sample>& samples, int64_t t) {
    auto after =
        std::upper_bound(samples.begin(), samples.end(), t, [](int64_t v, const Sample& s) { return v < s.host_ns; });
    return *(after - 1);
}
const Sample& sample_at_or_after(const std::vector<Sample>& samples, int64_t t) {
    return *std::lower_bound(samples.begin(), samples.end(), t,
                             [](const Sample& s, int64_t v) { return s.host_ns < v; });
}

// Bounds on the CPU time spent in [begin, end]: a reading is the true cumulative time rounded down to
// a tick, and the true time only grows, so a reading after a point bounds it from above (plus a tick)
// and a reading before it bounds it from below.
std::pair<double, double> cpu_ns_bounds(const std::vector<Sample>& samples, int64_t begin, int64_t end,
                                        int64_t tick_ns) {
    const double low = static_cast<double>(sample_at_or_before(samples, end).cpu_ns -
                                           (sample_at_or_after(samples, begin).cpu_ns + tick_ns));
    const double high = static_cast<double>(sample_at_or_after(samples, end).cpu_ns + tick_ns -
                                            sample_at_or_before(samples, begin).cpu_ns);
    return {std::max(0.0, low), high};
}

// The readings' unit: their greatest common divisor, or USER_HZ's tick when every reading is zero.
int64_t reading_tick_ns(const SamplesByProcess& by_process) {
    int64_t tick = 0;
    for (const auto& [process, samples] : by_process)
        for (const Sample& s : samples) tick = std::gcd(tick, s.cpu_ns);
    return tick > 0 ? tick : kUserHzTickNs;
}

int64_t median_sample_interval_ns(const SamplesByProcess& by_process) {
    std::vector<int64_t> gaps;
    for (const auto& [process, samples] : by_process)
        for (size_t i = 1; i < samples.size(); ++i) gaps.push_back(samples[i].host_ns - samples[i - 1].host_ns);
    if (gaps.empty()) return 0;
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    return gaps[gaps.size() / 2];
}

}  // namespace

void scan_cpu(const TraceFile& trace, Report& report) {
    SamplesByProcess by_process;
    trace::RowReader<trace::CpuSampleRow> rows(trace.db);
    for (trace::CpuSampleRow row; rows.next(row);)
        by_process[row.process].push_back({row.ts_ns, row.user_ns + row.system_ns});

    CpuMetrics& cpu = report.cpu;
    cpu.tick_ns = reading_tick_ns(by_process);
    cpu.sample_interval_ns = median_sample_interval_ns(by_process);
    const int64_t begin = report.window.begin_ns, end = report.window.end_ns;
    for (const auto& [process, samples] : by_process) {
        if (samples.size() < 2) continue;
        const int64_t covered_begin = std::max(begin, samples.front().host_ns);
        const int64_t covered_end = std::min(end, samples.back().host_ns);
        if (covered_end <= covered_begin) continue;
        const double covered_ns = static_cast<double>(covered_end - covered_begin);
        const double cpu_ns = cumulative_at(samples, covered_end) - cumulative_at(samples, covered_begin);
        const auto [low_ns, high_ns] = cpu_ns_bounds(samples, covered_begin, covered_end, cpu.tick_ns);
        CpuProcess one;
        one.process = process;
        one.utilization = std::max(0.0, cpu_ns / covered_ns);
        one.utilization_low = low_ns / covered_ns;
        one.utilization_high = high_ns / covered_ns;
        cpu.utilization += one.utilization;
        cpu.utilization_low += one.utilization_low;
        cpu.utilization_high += one.utilization_high;
        cpu.processes.push_back(one);
    }
    cpu.available = !cpu.processes.empty();
    if (!cpu.available) {
        report.notes.push_back("no CPU samples cover the window: CPU utilization unknown");
        return;
    }
    cpu.coarse = cpu.utilization_high - cpu.utilization_low > kCoarseCpuBoundsCores;
}

}  // namespace tbdprof::analyzer
