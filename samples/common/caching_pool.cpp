#include "caching_pool.h"

#include "check.h"

#include <cuda_runtime_api.h>

namespace tbdsample {
namespace {

constexpr std::size_t kMinBlock = 512;            // every request is rounded up to this
constexpr std::size_t kSmallSize = 1 << 20;       // largest request of the small pool
constexpr std::size_t kSmallSegment = 2 << 20;    // segment size of the small pool
constexpr std::size_t kMinLargeAlloc = 10 << 20;  // below: a 20 MiB segment
constexpr std::size_t kLargeSegment = 20 << 20;
constexpr std::size_t kRoundLarge = 2 << 20;  // larger segments: multiples of this

std::size_t round_up(std::size_t value, std::size_t unit) {
    return (value + unit - 1) / unit * unit;
}

std::size_t segment_size(std::size_t size) {
    if (size <= kSmallSize) return kSmallSegment;
    if (size < kMinLargeAlloc) return kLargeSegment;
    return round_up(size, kRoundLarge);
}

}  // namespace

CachingPool::~CachingPool() {
    for (const auto& [start, bytes] : segments_) {
        labels_.record_segment_free(start);
        cudaFree(start);  // no check: a destructor must not exit the program halfway
    }
}

bool CachingPool::same_segment(const Block& a, const Block& b) const {
    auto segment = segments_.upper_bound(a.start);
    --segment;  // the segment starting at or below a
    return b.start >= segment->first && b.start < segment->first + segment->second;
}

CachingPool::Blocks::iterator CachingPool::best_fit(std::size_t size, bool small) {
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
        const Block& b = it->second;
        if (!b.free || b.small != small || b.size < size) continue;
        if (best == blocks_.end() || b.size < best->second.size) best = it;  // ties: lower address
    }
    return best;
}

CachingPool::Blocks::iterator CachingPool::new_segment(std::size_t size, bool small) {
    std::size_t bytes = segment_size(size);
    void* pointer = nullptr;
    CUDA_CHECK(cudaMalloc(&pointer, bytes));
    char* start = static_cast<char*>(pointer);
    segments_[start] = bytes;
    reserved_bytes_ += bytes;
    labels_.record_segment(start, bytes);
    return blocks_.emplace(start, Block{start, bytes, true, small}).first;
}

void* CachingPool::allocate(std::size_t bytes) {
    std::size_t size = round_up(bytes == 0 ? 1 : bytes, kMinBlock);
    bool small = size <= kSmallSize;
    auto it = best_fit(size, small);
    if (it == blocks_.end()) it = new_segment(size, small);
    Block& block = it->second;
    std::size_t rest = block.size - size;
    // As PyTorch: small blocks split whenever the rest can hold a block; large ones only when the
    // rest could serve a large request, so that large blocks do not fragment into small slivers.
    if (small ? rest >= kMinBlock : rest > kSmallSize) {
        block.size = size;
        blocks_.emplace(block.start + size, Block{block.start + size, rest, true, small});
    }
    block.free = false;
    return block.start;
}

void CachingPool::release(void* pointer) {
    auto it = blocks_.find(static_cast<char*>(pointer));
    if (it == blocks_.end() || it->second.free)
        fail_message("caching pool: release of a block it did not hand out", __FILE__, __LINE__);
    it->second.free = true;
    auto next = std::next(it);
    if (next != blocks_.end() && next->second.free && same_segment(it->second, next->second)) {
        it->second.size += next->second.size;
        blocks_.erase(next);
    }
    if (it != blocks_.begin()) {
        auto previous = std::prev(it);
        if (previous->second.free && same_segment(previous->second, it->second) &&
            previous->second.start + previous->second.size == it->second.start) {
            previous->second.size += it->second.size;
            blocks_.erase(it);
        }
    }
}

}  // namespace tbdsample
