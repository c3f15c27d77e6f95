// Freed heap memory kept for the process's next allocations instead of handed back to the kernel.
#pragma once

#include <cstddef>

namespace tbdprof::cli {

// Blocks below this come from the heap and stay mapped once freed; larger ones are still mapped
// and unmapped on their own, so that a huge array does not pin memory for the rest of a run. Not
// higher: a vector grown by doubling leaves its old blocks behind in the heap, and at 32-64 MiB the
// import of a generated 120 MB trace peaked 8-16% higher (docs/benchmarks.md); at 16 MiB it did not.
constexpr size_t kHeapReuseBlockBytes = size_t{16} << 20;

// For the batch commands (import, report) whose stages each free a few arrays of MBs that the next
// stage allocates again: glibc maps each block over 128 KiB-32 MiB afresh and unmaps it on free, and
// every page of the next block is faulted in and zeroed by the kernel (14% of an import's CPU on
// df_index_resolver, docs/benchmarks.md). Returns false where the allocator ignores the request
// (not glibc, or a sanitizer's allocator).
bool keep_freed_heap_for_reuse();

}  // namespace tbdprof::cli
