#include "time_axis.h"

#include <algorithm>

namespace tbdprof::viewer {

void TimeAxis::set_run(int64_t duration_ns, int width_px) {
    run_duration_ns_ = std::max<int64_t>(1, duration_ns);
    width_px_ = std::max(1, width_px);
    fit_run();
}

void TimeAxis::set_width(int width_px) {
    const double span = ns_per_px_ * width_px_;
    width_px_ = std::max(1, width_px);
    ns_per_px_ = span / width_px_;
    clamp();
}

void TimeAxis::zoom(double factor, double anchor_x) {
    if (!(factor > 0)) return;
    const double anchor_t = trace_ns_at(anchor_x);
    ns_per_px_ /= factor;
    clamp();
    begin_trace_ns_ = anchor_t - anchor_x * ns_per_px_;
    clamp();
}

void TimeAxis::pan(double dx_px) {
    begin_trace_ns_ += dx_px * ns_per_px_;
    clamp();
}

void TimeAxis::fit(double begin_trace_ns, double end_trace_ns, bool margin) {
    if (end_trace_ns < begin_trace_ns) std::swap(begin_trace_ns, end_trace_ns);
    double span = std::max(end_trace_ns - begin_trace_ns, kMinNsPerPx * width_px_);
    if (margin) {
        begin_trace_ns -= span * 0.05;
        span *= 1.1;
    }
    ns_per_px_ = span / width_px_;
    begin_trace_ns_ = begin_trace_ns;
    clamp();
}

// Zoom out no further than a tenth beyond the run, pan no further than its ends: the run never
// leaves the view entirely, so a stray key never leaves an empty window.
void TimeAxis::clamp() {
    const double run = static_cast<double>(run_duration_ns_);
    const double max_ns_per_px = run * 1.1 / width_px_;
    ns_per_px_ = std::clamp(ns_per_px_, kMinNsPerPx, std::max(kMinNsPerPx, max_ns_per_px));
    const double span = ns_per_px_ * width_px_;
    // At least half the view lies inside the run.
    begin_trace_ns_ = std::clamp(begin_trace_ns_, -span * 0.5, std::max(-span * 0.5, run - span * 0.5));
}

}  // namespace tbdprof::viewer
