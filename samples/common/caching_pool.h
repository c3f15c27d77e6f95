// A caching device allocator modelled on PyTorch's CUDACachingAllocator, so that the samples can
// produce traces in which tensors are sub-ranges of pooled segments, with exact ground truth:
// - requests are rounded up to 512 bytes;
// - requests up to 1 MiB come from 2 MiB segments (the "small pool"); larger ones from 20 MiB
// segments
//   when under 10 MiB, else from a segment of the request rounded up to a 2 MiB multiple;
// - a request takes the best-fitting free block of its pool (smallest, then lowest address), split
//   when the rest is worth keeping (small pool: >= 512 bytes; large pool: > 1 MiB);
// - a freed block merges with free neighbours and is reused; segments are cudaMalloc'd when no free
//   block fits and only returned (cudaFree) when the pool is destroyed.
// Everything runs on one stream, so reuse needs no event tracking.
#pragma once

#include "labels.h"

#include <cstddef>
#include <map>

namespace tbdsample {

class CachingPool {
public:
    explicit CachingPool(LabelWriter& labels) : labels_(labels) {}
    ~CachingPool();  // returns every segment to the driver
    CachingPool(const CachingPool&) = delete;
    CachingPool& operator=(const CachingPool&) = delete;

    // The start of a block of at least `bytes` bytes.
    void* allocate(std::size_t bytes);
    // `pointer` must come from allocate() and not have been freed yet.
    void release(void* pointer);

    std::size_t reserved_bytes() const { return reserved_bytes_; }

private:
    struct Block {
        char* start = nullptr;
        std::size_t size = 0;
        bool free = true;
        bool small = true;  // which pool
    };
    // Blocks of every segment keyed by start address: neighbours in memory are neighbours here,
    // and a segment's blocks are contiguous (segment_of tells where one ends).
    using Blocks = std::map<char*, Block>;

    Blocks::iterator best_fit(std::size_t size, bool small);
    Blocks::iterator new_segment(std::size_t size, bool small);
    bool same_segment(const Block& a, const Block& b) const;

    LabelWriter& labels_;
    Blocks blocks_;
    std::map<char*, std::size_t> segments_;  // start -> bytes
    std::size_t reserved_bytes_ = 0;
};

}  // namespace tbdsample
