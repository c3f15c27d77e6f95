// Extents of the sub-ranges over time: each piece's size evidence, capped by the next start in use
// while it lives, and floors where a piece owns pointers beyond that cap (tagger/subranges.h).
#include "subrange_extents.h"

#include <algorithm>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

// Beyond this many candidates the search for the next start in use gives up: the extent then
// comes from size evidence or the segment end. Keeps huge pools from costing quadratic time.
constexpr size_t kMaxExtentScan = 20000;

bool live_together(const SubRange& a, const SubRange& b) {
    return a.first_work <= b.last_work && b.first_work <= a.last_work;
}

// The next start above `from` of another piece of self's segment in use at some time of self's
// life, else the segment end.
uint64_t next_live_start(const TraceModel& m, const SubRangeSet& set, size_t index, uint64_t from) {
    const SubRange& self = set.ranges[index];
    uint64_t next = uint64_t(std::max<int64_t>(m.allocations[size_t(self.segment)].bytes, 1));
    size_t scanned = 0;
    for (size_t j = index + 1; j < set.ranges.size() && scanned < kMaxExtentScan; ++j, ++scanned) {
        const SubRange& other = set.ranges[j];
        if (other.segment != self.segment || other.offset >= next) break;
        if (other.merged || other.offset <= from || !live_together(self, other)) continue;
        next = other.offset;
    }
    return next;
}

// Whether another piece starting below self's farthest pointer is in use when self uses bytes at or
// above that start: the two would hold those bytes at once. (A piece whose life only spans self's,
// with self's uses there before or after it, shares the bytes in turn: absorb_interior gave self a
// pointer used inside its own life, and a later tensor at that address is another instance.)
bool holds_bytes_with_other(const SubRangeSet& set, size_t index, const std::vector<size_t>& own_uses) {
    const SubRange& self = set.ranges[index];
    const uint64_t farthest = self.offset + uint64_t(self.reach_bytes) - 1;
    for (size_t j = index + 1; j < set.ranges.size() && j - index <= kMaxExtentScan; ++j) {
        const SubRange& other = set.ranges[j];
        if (other.segment != self.segment || other.offset > farthest) break;
        if (other.merged || other.offset == self.offset || !live_together(self, other)) continue;
        for (size_t u : own_uses) {
            const auto [offset, work] = set.use_offset_work[u];
            if (offset >= other.offset && other.first_work <= work && work <= other.last_work) return true;
        }
    }
    return false;
}

// A piece capped below a pointer it owns (absorb_interior gave it pointers inside its lower bound;
// a start in use somewhere in its longer life cut it short) left that pointer's bytes in no piece.
// Where no other piece holds those bytes while self uses them, the piece reaches past its farthest
// pointer to its size evidence, up to the next start in use above that pointer.
void apply_reach_floors(const TraceModel& m, SubRangeSet& set, const std::vector<size_t>& short_of_reach) {
    std::unordered_map<size_t, std::vector<size_t>> own_uses;
    for (size_t i : short_of_reach) own_uses[i];
    for (size_t u = 0; u < set.owner.size(); ++u) {
        auto found = set.owner[u] >= 0 ? own_uses.find(size_t(set.owner[u])) : own_uses.end();
        if (found != own_uses.end()) found->second.push_back(u);
    }
    for (size_t i : short_of_reach) {
        SubRange& self = set.ranges[i];
        if (holds_bytes_with_other(set, i, own_uses[i])) continue;
        const uint64_t farthest = self.offset + uint64_t(self.reach_bytes) - 1;
        auto cap = static_cast<int64_t>(next_live_start(m, set, i, farthest) - self.offset);
        self.bytes = std::min(std::max(self.known_bytes, self.reach_bytes), cap);
    }
}

}  // namespace

// (subrange_extents.h)
void record_reach(const TraceModel& m, SubRangeSet& set) {
    set.use_offset_work.resize(m.pointer_uses.size());
    for (size_t u = 0; u < set.owner.size(); ++u) {
        set.use_offset_work[u] = {m.pointer_uses[u].offset, m.pointer_uses[u].work};
        if (set.owner[u] < 0) continue;
        SubRange& r = set.ranges[size_t(set.owner[u])];
        if (m.pointer_uses[u].offset > r.offset)
            r.reach_bytes = std::max<int64_t>(r.reach_bytes, int64_t(m.pointer_uses[u].offset - r.offset + 1));
    }
}

void assign_extents(const TraceModel& m, SubRangeSet& set) {
    std::vector<size_t> short_of_reach;
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        SubRange& self = set.ranges[i];
        if (self.merged) continue;
        const uint64_t next = next_live_start(m, set, i, self.offset);
        auto cap = static_cast<int64_t>(next - self.offset);
        const bool at_tail = next >= uint64_t(m.allocations[size_t(self.segment)].bytes);  // rewritten_tenants.h
        if (self.known_bytes <= 0 && self.rewrite_cap_bytes > 0 && at_tail) cap = std::min(cap, self.rewrite_cap_bytes);
        self.bytes = self.known_bytes > 0 ? std::min(self.known_bytes, cap) : cap;
        // A bound of one tenant only (outlived_bounds.h) does not cap the others; where no start in
        // use lies above, the segment's free tail would, so the bound stays.
        if (self.bound_of_one_tenant && !self.exact && self.known_bytes > 0 && !at_tail) self.bytes = cap;
        if (self.reach_bytes > cap && self.known_bytes > 0) short_of_reach.push_back(i);
    }
    // (A set not made by derive_subranges has no record of where its uses point.)
    if (!short_of_reach.empty() && set.use_offset_work.size() == set.owner.size())
        apply_reach_floors(m, set, short_of_reach);
}

}  // namespace tbdprof::tagger
