#include "heap_reuse.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tbdprof::cli {

bool keep_freed_heap_for_reuse() {
#if defined(__GLIBC__)
    // Setting the mmap threshold also stops glibc's own adjustment of it, so it stays put. The
    // trim threshold keeps up to the same amount free at the heap's top rather than returning it.
    const int block_bytes = static_cast<int>(kHeapReuseBlockBytes);
    return mallopt(M_MMAP_THRESHOLD, block_bytes) == 1 && mallopt(M_TRIM_THRESHOLD, block_bytes) == 1;
#else
    return false;
#endif
}

}  // namespace tbdprof::cli
