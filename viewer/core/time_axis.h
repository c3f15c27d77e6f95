// Mapping between trace time (ns from the run start) and pixels, shared by the timeline and the
// memory chart so that both show the same span at the same zoom. Plain data, no Qt: unit-tested.
#pragma once

#include <cstdint>

namespace tbdprof::viewer {

class TimeAxis {
public:
    // The whole run [0, duration] fills `width_px` pixels.
    void set_run(int64_t duration_ns, int width_px);
    void set_width(int width_px);  // keeps the visible start and span; ns_per_px follows
    int width() const { return width_px_; }
    int64_t run_duration_ns() const { return run_duration_ns_; }

    double begin_trace_ns() const { return begin_trace_ns_; }
    double end_trace_ns() const { return begin_trace_ns_ + ns_per_px_ * width_px_; }
    double ns_per_px() const { return ns_per_px_; }

    double x_of(double trace_ns) const { return (trace_ns - begin_trace_ns_) / ns_per_px_; }
    double trace_ns_at(double x_px) const { return begin_trace_ns_ + x_px * ns_per_px_; }

    // factor > 1 zooms in; the time under anchor_x stays under it.
    void zoom(double factor, double anchor_x);
    void pan(double dx_px);  // positive: later times come into view
    // Shows [begin, end] of trace time (with a small margin when `margin` is set).
    void fit(double begin_trace_ns, double end_trace_ns, bool margin = true);
    void fit_run() { fit(0, static_cast<double>(run_duration_ns_), false); }

    static constexpr double kMinNsPerPx = 0.01;  // 1 ns spans 100 px at the deepest zoom

private:
    void clamp();
    int64_t run_duration_ns_ = 1;
    int width_px_ = 1;
    double begin_trace_ns_ = 0;
    double ns_per_px_ = 1;
};

}  // namespace tbdprof::viewer
