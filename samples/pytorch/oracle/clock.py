"""torch.profiler's clock -> CLOCK_MONOTONIC (the clock of tbdprof's traces), from marks.

A mark is an empty profiler range timed on both clocks: CLOCK_MONOTONIC read just before entering
it and just after leaving it. The range lies inside [before, after], so the offset (profiler -
monotonic) lies in [range end - after, range start - before]. The two sides are not alike:
entering costs the profiler's bookkeeping before it stamps the start (40-90 us, 100-600 us on the
first call), leaving returns within microseconds of the end stamp; and a thread preempted anywhere
in the mark (a loaded machine) widens it by milliseconds. The labeller once took the middle of
[before, after] for the range's start: a mark preempted before its range began (7.3 ms wide, 0.1 ms
of range) then shifted every time converted with it, a whole training step of labels, 3.6 ms early,
and the step's activations were scored against no sub-range (docs/tagging.md, "The labeller's
clock"). So each mark is taken several times back to back and the offset is the highest low bound
of its tries (the end stamp of the try least delayed on leaving), held under the lowest high bound.
Between marks the offset is interpolated (the profiler's clock may run at another rate). No torch
here: the arithmetic is tested on its own (clock_test.py).
"""

import bisect


def offset_bounds(event_start_ns, event_end_ns, before_ns, after_ns):
    """(low, high) of profiler time - CLOCK_MONOTONIC from one timed event: it began after
    before_ns and ended before after_ns (CLOCK_MONOTONIC), at event_start_ns..event_end_ns
    (profiler clock)."""
    return event_end_ns - after_ns, event_start_ns - before_ns


def mark_offset(tries):
    """(offset, uncertainty) in ns of one mark from its tries [(range start, range end, before,
    after)], taken back to back (the clocks do not drift apart within them): the highest low bound
    (the leaving side, microseconds from the truth unless every try was preempted there) held under
    the lowest high bound, and how far above it the truth may lie."""
    bounds = [offset_bounds(*t) for t in tries]
    low, high = max(b[0] for b in bounds), min(b[1] for b in bounds)
    offset = min(low, high)  # bounds that cross: the profiler's clock is off by a few microseconds
    return offset, max(high - offset, 0)


class ProfilerClock:
    """Profiler time -> CLOCK_MONOTONIC; marks are [(profiler time of the mark, offset)]. Between two
    marks the offset runs linearly from one to the other: the profiler's times follow the wall
    clock, which time keeping may slew (0.46-0.54% in some runs, steadily), and a held offset turns
    that into an error growing through the step, 3 ms by the end of a 0.6 s first step. Before the
    first mark and after the last, the nearest mark's offset."""

    def __init__(self, marks):
        if not marks:
            raise ValueError("a clock needs one mark at least")
        self.points = sorted(marks)

    def __call__(self, profiler_ns):
        i = bisect.bisect_right(self.points, (profiler_ns, float("inf"))) - 1
        if i < 0:
            return profiler_ns - self.points[0][1]
        if i + 1 == len(self.points):
            return profiler_ns - self.points[i][1]
        (t0, offset0), (t1, offset1) = self.points[i], self.points[i + 1]
        return profiler_ns - (offset0 + (offset1 - offset0) * (profiler_ns - t0) // max(t1 - t0, 1))


def clock_from_events(events, marks_monotonic):
    """The clock from the profiler's mark events [(start, end)] (profiler clock, any order) and
    the marks' tries [[(before, after), ...], ...] (CLOCK_MONOTONIC, in the order taken). Returns
    (clock, largest uncertainty in ns)."""
    events = sorted(events)
    tries = [t for mark in marks_monotonic for t in mark]
    if len(events) != len(tries):
        raise RuntimeError(f"the profile has {len(events)} clock mark events for {len(tries)} tries: "
                           "was the clock marked while recording?")
    points, worst, i = [], 0, 0
    for mark in marks_monotonic:
        timed = [(start, end, before, after) for (start, end), (before, after) in zip(events[i:i + len(mark)], mark)]
        offset, uncertainty = mark_offset(timed)
        points.append((timed[0][0], offset))
        worst = max(worst, uncertainty)
        i += len(mark)
    return ProfilerClock(points), worst
