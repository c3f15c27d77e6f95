// Kernels tallied per library call, for spreading each call's FLOPs over its kernels (gpu_scan.cpp).
// The scan reads kernels in rounds of ids; a part of a round tallies the calls its kernels name
// (CallTallies), and OpenCalls adds the parts up call by call until the scan has passed a call's
// kernels. Then the call is attributed and dropped: what is held is the calls of about one round,
// not one tally per call of the run. Internal to the analyzer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tbdprof::analyzer {

// The kernels of one library call id seen so far (the call may not exist). All zero = none.
struct CallTally {
    int64_t count, total_ns, window_ns, window_count;
    int64_t function;  // the function of its kernels when `mixed` is false
    int64_t device;    // device of its first kernel
    bool mixed;        // kernels of several functions: shares per function are kept apart
};

struct MixedShare {
    int64_t window_ns = 0;
    int64_t window_count = 0;
};

// Time sums saturate at INT64_MAX instead of wrapping to negative totals.
inline void add_saturating(int64_t& total, int64_t value) {
    if (__builtin_add_overflow(total, value, &total)) total = value < 0 ? INT64_MIN : INT64_MAX;
}

// In-window kernel time and count per (call, function), for calls whose kernels run several functions.
using MixedShares = std::map<std::pair<int64_t, int64_t>, MixedShare>;

// One part's tallies by call id. The kernels of a part name calls of neighbouring ids, so the ids
// from the first one it names up to `dense_span` above it are kept in a vector, any other in a map.
class CallTallies {
public:
    explicit CallTallies(int64_t dense_span) : span_(dense_span) {}
    CallTally& operator[](int64_t id);
    // The tallies with kernels, ascending by id.
    std::vector<std::pair<int64_t, const CallTally*>> sorted() const;

private:
    int64_t span_;
    int64_t base_ = 0;
    bool started_ = false;
    std::vector<CallTally> dense_;  // id base_ + i
    std::unordered_map<int64_t, CallTally> sparse_;
};

// Adds a piece (one part's tally of call `id`) to the call's tally so far, exactly as if one part
// had seen all its kernels: the function and device of the first piece, mixed when pieces differ in
// function; the per-function shares of a mixed call go to `shares`.
void add_piece(int64_t id, const CallTally& piece, const MixedShares& piece_shares, CallTally& call,
               MixedShares& shares);

// The calls with kernels seen and not yet attributed, sorted by id.
class OpenCalls {
public:
    // A part's tallies; parts must come in kernel id order.
    void add(const CallTallies& tallies, const MixedShares& shares);
    // The tally of call `id` (nullptr: no kernel seen); ids must be asked in ascending order, and
    // the tallies of ids passed over are dropped.
    const CallTally* take(int64_t id);
    // The per-function shares of mixed calls not yet dropped.
    const MixedShares& shares() const { return shares_; }
    // Drops every tally below `id` (attributed, or of calls that do not exist).
    void drop_below(int64_t id);
    size_t size() const { return calls_.size() - front_; }

private:
    std::vector<std::pair<int64_t, CallTally>> calls_;
    size_t front_ = 0;  // calls_ before it are taken
    MixedShares shares_;
};

}  // namespace tbdprof::analyzer
