#include "rewritten_tenants.h"

namespace tbdprof::tagger {

void cap_rewritten_tenants(SubRangeSet& set) {
    for (size_t i = 1; i < set.ranges.size(); ++i) {
        SubRange& self = set.ranges[i];
        const SubRange& before = set.ranges[i - 1];
        if (!self.after_rewrite || self.known_bytes > 0 || before.segment != self.segment ||
            before.offset != self.offset)
            continue;
        self.rewrite_cap_bytes = before.known_bytes > 0 ? before.known_bytes : before.rewrite_cap_bytes;
    }
}

std::vector<size_t> uses_before_rewrites(const SubRangeSet& set, const std::vector<std::vector<size_t>>& uses,
                                         size_t index) {
    std::vector<size_t> before;
    if (index >= set.ranges.size() || index >= uses.size()) return before;
    const SubRange& self = set.ranges[index];
    // (The pieces are ordered by segment, offset, then time: the earlier tenants are just before.)
    for (size_t j = index; j > 0 && set.ranges[j].after_rewrite; --j) {
        const SubRange& earlier = set.ranges[j - 1];
        if (earlier.segment != self.segment || earlier.offset != self.offset) break;
        before.insert(before.end(), uses[j - 1].begin(), uses[j - 1].end());
    }
    return before;
}

}  // namespace tbdprof::tagger
