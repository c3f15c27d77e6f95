// Streaming union of intervals that arrive sorted by start: each maximal busy stretch is handed to
// a sink exactly once, so the sum of what the sink sees is the measure of the union.
#pragma once

#include <cstdint>

namespace tbdprof::analyzer {

class IntervalUnion {
public:
    template <class Sink>
    void add(int64_t begin, int64_t end, Sink&& sink) {
        if (!open_) {
            begin_ = begin;
            end_ = end;
            open_ = true;
        } else if (begin > end_) {
            sink(begin_, end_);
            begin_ = begin;
            end_ = end;
        } else if (end > end_) {
            end_ = end;
        }
    }
    template <class Sink>
    void close(Sink&& sink) {
        if (open_) sink(begin_, end_);
        open_ = false;
    }

private:
    int64_t begin_ = 0;
    int64_t end_ = 0;
    bool open_ = false;
};

// Length of [begin, end) inside [lo, hi).
inline int64_t overlap(int64_t begin, int64_t end, int64_t lo, int64_t hi) {
    const int64_t b = begin > lo ? begin : lo;
    const int64_t e = end < hi ? end : hi;
    return e > b ? e - b : 0;
}

}  // namespace tbdprof::analyzer
