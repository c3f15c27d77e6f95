// Level of detail for one timeline row: a mipmap of time buckets, spans a power of two apart, built
// once per trace. Each bucket keeps the fraction of it that some item covers (exact: the union of
// the items, so overlaps count once) and the longest item starting in it. Drawing a zoomed-out row
// then costs one bucket per pixel, whatever the number of items. Rows with items a CUDA graph replay
// ran also keep one bit per bucket: some such item starts in it (so a folded block can say so).
#pragma once

#include <cstdint>
#include <vector>

#include "item_row.h"

namespace tbdprof::viewer {

struct LodBucket {
    float busy = 0;        // covered fraction, 0..1
    uint32_t longest = 0;  // 1 + index of the longest item starting in the bucket; 0: none
};

class IntervalMipmap {
public:
    // Level 0 gets at most `max_buckets` buckets (a power-of-two span); each level above halves them.
    void build(const ItemRow& row, int64_t run_duration_ns, size_t max_buckets = size_t{1} << 20);
    bool empty() const { return levels_.empty(); }
    int levels() const { return static_cast<int>(levels_.size()); }
    int64_t span(int level) const;  // ns per bucket; saturates at INT64_MAX
    size_t bucket_count(int level) const { return levels_[static_cast<size_t>(level)].size(); }
    const LodBucket& bucket(int level, size_t index) const { return levels_[static_cast<size_t>(level)][index]; }
    // The coarsest level whose buckets are no wider than `ns_per_bucket` (level 0 when all are).
    int level_for(double ns_per_bucket) const;
    // Whether an item marked in the row (a graph-replayed kernel) starts in the bucket.
    bool marked(int level, size_t index) const {
        return !marked_.empty() && marked_[static_cast<size_t>(level)][index];
    }
    size_t bytes() const;

private:
    int64_t base_span_ = 1;
    std::vector<std::vector<LodBucket>> levels_;
    std::vector<std::vector<bool>> marked_;  // per level, per bucket; empty when no item is marked
};

}  // namespace tbdprof::viewer
