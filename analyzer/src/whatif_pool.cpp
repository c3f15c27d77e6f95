// PyTorch's caching allocator policy replayed on tensor requests (whatif_pool.h).
#include "whatif_pool.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <unordered_map>

namespace tbdprof::analyzer {
namespace {

constexpr int64_t kRound = 512;
constexpr int64_t kSmallRequest = kPoolSmallRequestBytes;
constexpr int64_t kSmallSegment = int64_t{2} << 20;
constexpr int64_t kMidRequest = int64_t{10} << 20;
constexpr int64_t kMidSegment = int64_t{20} << 20;
constexpr int64_t kLargeRound = int64_t{2} << 20;

int64_t round_up(int64_t value, int64_t unit) {
    return (value + unit - 1) / unit * unit;
}

struct Block {
    int64_t size = 0;
    int64_t segment = 0;  // start of its segment
    bool free = true;
    bool small = true;
};

class Pool {
public:
    explicit Pool(std::vector<PoolSegment>& segments) : segments_(segments) {}

    void allocate(int64_t tensor, int64_t bytes, int64_t trace_ns) {
        const int64_t size = round_up(std::max<int64_t>(bytes, 1), kRound);
        const bool small = size <= kSmallRequest;
        auto it = best_fit(size, small);
        if (it == blocks_.end()) it = new_segment(size, small, trace_ns);
        Block& block = it->second;
        const int64_t rest = block.size - size;
        if (small ? rest >= kRound : rest > kSmallRequest) {
            block.size = size;
            blocks_.emplace(it->first + size, Block{rest, block.segment, true, small});
        }
        block.free = false;
        owner_[tensor] = it->first;
    }

    void release(int64_t tensor) {
        const auto owned = owner_.find(tensor);
        if (owned == owner_.end()) return;
        auto it = blocks_.find(owned->second);
        owner_.erase(owned);
        it->second.free = true;
        const auto next = std::next(it);
        if (next != blocks_.end() && next->second.free && next->second.segment == it->second.segment) {
            it->second.size += next->second.size;
            blocks_.erase(next);
        }
        if (it != blocks_.begin()) {
            const auto previous = std::prev(it);
            if (previous->second.free && previous->second.segment == it->second.segment) {
                previous->second.size += it->second.size;
                blocks_.erase(it);
            }
        }
    }

private:
    using Blocks = std::map<int64_t, Block>;  // by address

    Blocks::iterator best_fit(int64_t size, bool small) {
        auto best = blocks_.end();
        for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
            const Block& b = it->second;
            if (!b.free || b.small != small || b.size < size) continue;
            if (best == blocks_.end() || b.size < best->second.size) best = it;
        }
        return best;
    }

    Blocks::iterator new_segment(int64_t size, bool small, int64_t trace_ns) {
        const int64_t bytes = size <= kSmallRequest ? kSmallSegment
                              : size < kMidRequest  ? kMidSegment
                                                    : round_up(size, kLargeRound);
        const int64_t start = next_address_;
        next_address_ += bytes;
        segments_.push_back({trace_ns, bytes});
        return blocks_.emplace(start, Block{bytes, start, true, small}).first;
    }

    std::vector<PoolSegment>& segments_;
    Blocks blocks_;
    std::unordered_map<int64_t, int64_t> owner_;  // tensor -> block address
    int64_t next_address_ = 0;
};

// PyTorch's expandable segments: per pool one segment grown by mapping pages at its end.
class ExpandablePool {
public:
    explicit ExpandablePool(std::vector<PoolSegment>& pages) : pages_(pages) {}

    void allocate(int64_t tensor, int64_t bytes, int64_t trace_ns) {
        const int64_t size = round_up(std::max<int64_t>(bytes, 1), kRound);
        Segment& segment = segments_[size <= kSmallRequest ? 0 : 1];
        auto it = best_fit(segment, size);
        if (it == segment.blocks.end()) it = grow(segment, size, trace_ns);
        const int64_t rest = it->second.size - size;
        if (rest >= kRound) {  // expandable segments split at 512 B in both pools
            it->second.size = size;
            segment.blocks.emplace(it->first + size, Block{rest, 0, true, true});
        }
        it->second.free = false;
        owner_[tensor] = {&segment, it->first};
    }

    void release(int64_t tensor) {
        const auto owned = owner_.find(tensor);
        if (owned == owner_.end()) return;
        auto& blocks = owned->second.first->blocks;
        auto it = blocks.find(owned->second.second);
        owner_.erase(owned);
        it->second.free = true;
        if (const auto next = std::next(it); next != blocks.end() && next->second.free) {
            it->second.size += next->second.size;
            blocks.erase(next);
        }
        if (it != blocks.begin())
            if (const auto previous = std::prev(it); previous->second.free) {
                previous->second.size += it->second.size;
                blocks.erase(it);
            }
    }

private:
    struct Segment {
        int64_t page_bytes = 0;
        int64_t mapped_bytes = 0;  // from the segment's start; blocks cover [0, mapped_bytes)
        std::map<int64_t, Block> blocks;
    };
    using Blocks = std::map<int64_t, Block>;

    // The smallest free block that fits, the one at the mapped end only when no other does: PyTorch
    // ranks a block by the size it can grow to, and the end block can grow over every unmapped page.
    static Blocks::iterator best_fit(Segment& segment, int64_t size) {
        auto best = segment.blocks.end();
        auto end_block = segment.blocks.end();
        for (auto it = segment.blocks.begin(); it != segment.blocks.end(); ++it) {
            const Block& b = it->second;
            if (!b.free || b.size < size) continue;
            if (it->first + b.size == segment.mapped_bytes) {
                end_block = it;
            } else if (best == segment.blocks.end() || b.size < best->second.size) {
                best = it;
            }
        }
        return best != segment.blocks.end() ? best : end_block;
    }

    // Maps the pages the request needs beyond the free block at the mapped end (if any).
    Blocks::iterator grow(Segment& segment, int64_t size, int64_t trace_ns) {
        auto last = segment.blocks.empty() ? segment.blocks.end() : std::prev(segment.blocks.end());
        if (last == segment.blocks.end() || !last->second.free)
            last = segment.blocks.emplace(segment.mapped_bytes, Block{0, 0, true, true}).first;
        while (last->second.size < size) {
            pages_.push_back({trace_ns, segment.page_bytes});
            segment.mapped_bytes += segment.page_bytes;
            last->second.size += segment.page_bytes;
        }
        return last;
    }

    std::vector<PoolSegment>& pages_;
    Segment segments_[2] = {{kSmallSegment, 0, {}}, {kMidSegment, 0, {}}};  // small pool, large pool
    std::unordered_map<int64_t, std::pair<Segment*, int64_t>> owner_;       // tensor -> its segment, block
};

template <typename PoolType>
std::vector<PoolSegment> replay_requests(const std::vector<PoolEvent>& events) {
    std::vector<PoolSegment> segments;
    PoolType pool(segments);
    for (const PoolEvent& e : events) {
        if (e.alloc)
            pool.allocate(e.tensor, e.bytes, e.trace_ns);
        else
            pool.release(e.tensor);
    }
    return segments;
}

}  // namespace

std::vector<PoolSegment> simulate_caching_pool(const std::vector<PoolEvent>& events, bool expandable) {
    return expandable ? replay_requests<ExpandablePool>(events) : replay_requests<Pool>(events);
}

int64_t largest_request_in_segment(int64_t segment_bytes) {
    return segment_bytes == kSmallSegment ? kSmallRequest : segment_bytes;
}

}  // namespace tbdprof::analyzer
