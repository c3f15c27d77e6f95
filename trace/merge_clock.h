// Clock offsets between per-host traces from the NCCL collectives they share (see merge.h).
#pragma once

#include "tbdprof/trace/sqlite_handle.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace::merge {

// One collective as one rank saw it: what NCCL requires every rank to call alike, and when its
// kernel ended on this rank's device (this trace's clock).
struct CollectiveEnd {
    std::string op, datatype;
    int64_t count = 0, root = -1, end_ns = 0;
    bool same_call(const CollectiveEnd& other) const {
        return op == other.op && datatype == other.datatype && count == other.count && root == other.root;
    }
};

// The collectives one process issued on one communicator, in issue order.
struct CommunicatorSequence {
    int64_t process = 0, communicator = 0;
    std::optional<int64_t> nranks, rank;
    std::optional<int64_t> identity;  // nccl_calls.communicator_identity; none: not recorded (older traces)
    std::vector<CollectiveEnd> collectives;
};

// Reads every collective with a timed kernel (send/recv are point to point: they end at no common
// moment). A call inside ncclGroupStart/End has no kernel of its own: it ends with the kernels of the
// ncclGroupEnd that launched the group.
std::vector<CommunicatorSequence> read_collectives(const Database& db);

struct ClockMatch {
    int64_t offset_ns = 0;  // add to `other`'s times to put them on `reference`'s clock
    int64_t matched = 0;    // end-time differences (one per collective per matched pair)
    int64_t spread_ns = 0;  // their max - min
    int64_t agreeing = 0;   // how many lie within 1 us of the offset (the others: a kernel that ended late)
    int64_t rank_pairs = 0;
};

// Pairs a communicator of `other` with one of `reference` when both have the same number of ranks,
// different ranks, and the same calls in the same order (over the shorter sequence), and, when both
// carry a recorded identity, the same one (look-alike groups stay apart); the offset is
// the median of the end-time differences over all pairs. nullopt: they share no collective.
std::optional<ClockMatch> match_clocks(const std::vector<CommunicatorSequence>& reference,
                                       const std::vector<CommunicatorSequence>& other);

}  // namespace tbdprof::trace::merge
