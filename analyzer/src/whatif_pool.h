// A caching allocator's segment policy, for the memory what-if (docs/whatif.md, "Caching pools"):
// the tensors of a run whose device allocations are pooled segments, replayed at their new sizes
// through the policy PyTorch documents for its CUDA caching allocator, give the segments the pool
// would reserve. Used only when the same replay at the recorded sizes reproduces the recorded
// segments.
#pragma once

#include <cstdint>
#include <vector>

namespace tbdprof::analyzer {

// One tensor request or release, in replay order.
struct PoolEvent {
    int64_t trace_ns = 0;
    bool alloc = true;
    int64_t tensor = 0;  // identifies the tensor between its allocation and release
    int64_t bytes = 0;   // for an allocation
};

struct PoolSegment {
    int64_t alloc_ns = 0, bytes = 0;  // kept until the end of the run, as the pool keeps them
};

// The largest request PyTorch's small pool serves (larger ones go to the large pool).
inline constexpr int64_t kPoolSmallRequestBytes = int64_t{1} << 20;

// PyTorch's policy: requests rounded up to 512 B; up to 1 MiB from 2 MiB segments (the small
// pool), up to 10 MiB from 20 MiB segments, larger ones from segments of the request rounded up to
// 2 MiB; the smallest free block of the request's pool that fits (lowest address on ties), split
// when the rest is at least 512 B (small pool) or over 1 MiB (large); freed blocks merge with free
// neighbours of their segment; segments are never returned.
//
// With `expandable` (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), each pool is one segment of
// reserved address space that grows by mapping pages at its end: 2 MiB pages for the small pool, 20 MiB
// for the large one. A request takes the smallest free block of its pool that fits, the free block at
// the segment's mapped end only when no other fits; with none, that end block (free, or none) grows by
// as many pages as the rest of the request needs. Blocks split when the rest is at least 512 B in
// both pools. The result is then one PoolSegment per mapped page (pages are never unmapped here:
// PyTorch unmaps only on empty_cache or an out-of-memory retry).
std::vector<PoolSegment> simulate_caching_pool(const std::vector<PoolEvent>& events, bool expandable = false);

// The largest request the policy serves from a segment of `segment_bytes`: a 2 MiB segment is the
// small pool's (a larger request gets a 20 MiB segment or its own of at least 12 MiB), which serves
// requests up to 1 MiB; any other segment, its size.
int64_t largest_request_in_segment(int64_t segment_bytes);

}  // namespace tbdprof::analyzer
