// xla_style_train's sub-allocator inside the preallocated region, after what XLA's BFC ("best-fit
// with coalescing") allocator does: requests are rounded up to 256 bytes; a request takes the
// smallest free chunk that holds it (the lowest address among equals); the chunk is split when the
// rest is worth keeping (the chunk is at least twice the request, or the rest is 128 MiB or more);
// a freed chunk is merged with free neighbours. Offsets only: the caller adds the region's base.
#pragma once

#include <cstddef>
#include <iterator>
#include <map>

namespace xla_style {

class BfcAllocator {
public:
    static constexpr std::size_t kAlignmentBytes = 256;
    static constexpr std::size_t kMaxInternalFragmentationBytes = std::size_t(128) << 20;
    static constexpr std::size_t kNoSpace = ~std::size_t(0);

    explicit BfcAllocator(std::size_t region_bytes) { chunks_[0] = {region_bytes, false}; }

    static std::size_t rounded(std::size_t bytes) {
        std::size_t units = (bytes + kAlignmentBytes - 1) / kAlignmentBytes;
        return (units == 0 ? 1 : units) * kAlignmentBytes;
    }

    // The offset of a chunk of at least `bytes`, or kNoSpace when no free chunk holds it.
    std::size_t allocate(std::size_t bytes) {
        const std::size_t want = rounded(bytes);
        auto best = chunks_.end();
        for (auto it = chunks_.begin(); it != chunks_.end(); ++it)
            if (!it->second.used && it->second.bytes >= want &&
                (best == chunks_.end() || it->second.bytes < best->second.bytes))
                best = it;
        if (best == chunks_.end()) return kNoSpace;
        Chunk& chunk = best->second;
        if (chunk.bytes >= 2 * want || chunk.bytes - want >= kMaxInternalFragmentationBytes) {
            chunks_[best->first + want] = {chunk.bytes - want, false};
            chunk.bytes = want;
        }
        chunk.used = true;
        in_use_bytes_ += chunk.bytes;
        return best->first;
    }

    // Frees the chunk at `offset` and merges it with a free chunk on either side.
    void deallocate(std::size_t offset) {
        auto it = chunks_.find(offset);
        if (it == chunks_.end() || !it->second.used) return;
        it->second.used = false;
        in_use_bytes_ -= it->second.bytes;
        auto next = std::next(it);
        if (next != chunks_.end() && !next->second.used) {
            it->second.bytes += next->second.bytes;
            chunks_.erase(next);
        }
        if (it != chunks_.begin()) {
            auto previous = std::prev(it);
            if (!previous->second.used) {
                previous->second.bytes += it->second.bytes;
                chunks_.erase(it);
            }
        }
    }

    std::size_t in_use_bytes() const { return in_use_bytes_; }

private:
    struct Chunk {
        std::size_t bytes;
        bool used;
    };
    std::map<std::size_t, Chunk> chunks_;  // by offset; together they tile the region
    std::size_t in_use_bytes_ = 0;
};

}  // namespace xla_style
