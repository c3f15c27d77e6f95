#include "summary.h"

#include <fmt/format.h>

#include <cstdio>

#include <tbdprof/trace/safe_text.h>

namespace tbdprof::cli {

std::string format_bytes(int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        ++unit;
    }
    if (unit == 0) return fmt::format("{} B", bytes);
    return fmt::format("{:.1f} {}", value, units[unit]);
}

std::string format_summary(const trace::TraceSummary& s, const std::string& trace_path) {
    std::string out;
    auto add = [&](const char* label, const std::string& value) { out += fmt::format("  {:<20} {}\n", label, value); };
    // No process row: no process loaded the collector (record says why, collector_absent.h).
    out += (s.processes > 0 ? "tbdprof: recorded " : "tbdprof: nothing recorded from ") + s.command_line + "\n";
    add("duration", fmt::format("{:.3f} s", static_cast<double>(s.duration_ns) / 1e9));
    if (!s.device_name.empty()) add("device", s.device_name + (s.simulated_device ? " (simulated)" : ""));
    add("kernels", std::to_string(s.kernels));
    add("copies", std::to_string(s.copies) + " (and " + std::to_string(s.sets) + " sets)");
    add("allocations", std::to_string(s.allocations));
    add("peak device memory", format_bytes(s.peak_device_bytes));
    if (s.processes > 1) add("processes", std::to_string(s.processes));
    if (s.clock_source != "cupti")
        add("timestamps", s.clock_source == "host" ? "host-side only (no CUPTI)" : "partly host-side");
    if (s.dropped_events > 0) add("DROPPED events", std::to_string(s.dropped_events));
    add("trace", trace_path);
    return trace::printable(out);  // the command line and device name come from the trace
}

}  // namespace tbdprof::cli
