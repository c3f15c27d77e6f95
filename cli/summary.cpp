#include "summary.h"

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
    char text[64];
    if (unit == 0) std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
    else std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

std::string format_summary(const trace::TraceSummary& s, const std::string& trace_path) {
    char line[512];
    std::string out;
    auto add = [&](const char* label, const std::string& value) {
        std::snprintf(line, sizeof line, "  %-20s %s\n", label, value.c_str());
        out += line;
    };
    out += "tbdprof: recorded " + s.command_line + "\n";
    std::snprintf(line, sizeof line, "%.3f s", static_cast<double>(s.duration_ns) / 1e9);
    add("duration", line);
    if (!s.device_name.empty()) add("device", s.device_name + (s.simulated_device ? " (simulated)" : ""));
    add("kernels", std::to_string(s.kernels));
    add("copies", std::to_string(s.copies) + " (and " + std::to_string(s.sets) + " sets)");
    add("allocations", std::to_string(s.allocations));
    add("peak device memory", format_bytes(s.peak_device_bytes));
    if (s.processes > 1) add("processes", std::to_string(s.processes));
    if (s.clock_source != "cupti") add("timestamps", s.clock_source == "host" ? "host-side only (no CUPTI)" : "partly host-side");
    if (s.dropped_events > 0) add("DROPPED events", std::to_string(s.dropped_events));
    add("trace", trace_path);
    return trace::printable(out);  // the command line and device name come from the trace
}

}  // namespace tbdprof::cli
