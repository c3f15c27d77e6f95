// keep_freed_heap_for_reuse (cli/heap_reuse.h): a block of a few MiB freed and allocated again is
// served from pages the process already has, so writing it takes no page faults. Without the
// setting glibc maps such a block afresh each time and each of its pages faults in again.
#include "heap_reuse.h"

#include <doctest/doctest.h>

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

namespace {

long minor_faults() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

// Minor page faults taken while a fresh block of `bytes` is allocated, written whole and freed.
long faults_writing_a_block(size_t bytes) {
    const long before = minor_faults();
    auto* block = static_cast<char*>(std::malloc(bytes));
    REQUIRE(block != nullptr);
    std::memset(block, 1, bytes);
    const long faults = minor_faults() - before;
    std::free(block);
    return faults;
}

}  // namespace

TEST_CASE("a freed block of MiBs is reused without faulting its pages in again") {
    constexpr size_t kBlockBytes = size_t{8} << 20;  // 2048 pages of 4 KiB: above glibc's mmap threshold
    static_assert(kBlockBytes < tbdprof::cli::kHeapReuseBlockBytes);
    REQUIRE(tbdprof::cli::keep_freed_heap_for_reuse());
    faults_writing_a_block(kBlockBytes);  // the first time the heap grows: its pages fault in
    const long again = faults_writing_a_block(kBlockBytes);
    // Fresh pages it would be 2048 faults (or 4 with 2 MiB pages); kept, none but a stray few.
    CHECK(again < 3);
}

TEST_CASE("blocks above the reuse bound are still given back to the kernel when freed") {
    REQUIRE(tbdprof::cli::keep_freed_heap_for_reuse());
    const size_t huge_bytes = tbdprof::cli::kHeapReuseBlockBytes * 2;
    faults_writing_a_block(huge_bytes);
    // Mapped anew and unmapped on free: the second block's pages fault in again.
    // (> 4, not thousands: with transparent huge pages set to always a 32 MiB block is ~16 faults.)
    CHECK(faults_writing_a_block(huge_bytes) > 4);
}
