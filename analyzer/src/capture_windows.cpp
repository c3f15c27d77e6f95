// Capture control in the report: which windows of the run were recorded (trace table
// capture_windows; docs/trace-format.md). Kept apart from the report's other sections.
#include <cstdio>

#include <fmt/format.h>

#include "analysis_parts.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

std::vector<CaptureWindowInfo> read_capture_windows(const TraceFile& trace) {
    std::vector<CaptureWindowInfo> out;
    trace::RowReader<trace::CaptureWindowRow> rows(trace.db);
    for (trace::CaptureWindowRow row; rows.next(row);) out.push_back({row.begin_ns, row.end_ns, std::string(row.reason)});
    return out;
}

std::string capture_sentence(const Report& r) {
    if (r.capture_windows.empty()) return {};
    auto span = [](const CaptureWindowInfo& w) {
        return fmt::format("{:.3f}-{:.3f} s", static_cast<double>(w.begin_ns) * 1e-9, static_cast<double>(w.end_ns) * 1e-9);
    };
    const CaptureWindowInfo& first = r.capture_windows.front();
    std::string s = "Captured: ";
    if (r.capture_windows.size() == 1) {
        s += first.reason + " (1 window, " + span(first) + ")";
    } else {
        s += std::to_string(r.capture_windows.size()) + " windows (" + first.reason + "): ";
        for (size_t i = 0; i < r.capture_windows.size() && i < 8; ++i)
            s += (i ? ", " : "") + span(r.capture_windows[i]);
        if (r.capture_windows.size() > 8) s += ", ...";
    }
    return fmt::format("{} of a {:.3f} s run; kernels, copies and sets only inside, allocations throughout", s,
                       static_cast<double>(r.run.duration_ns) * 1e-9);
}

}  // namespace tbdprof::analyzer
