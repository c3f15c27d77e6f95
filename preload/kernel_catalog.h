// What the launch hook needs to know about a kernel, computed once per CUfunction and kept in a fixed
// lock-free table: the interned mangled name, the parameter layout (cuFuncGetParamInfo, iterated until
// it fails) and which parameters are pointers to const (from the mangled name).
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tbdprof/collector/recorder.h"

namespace tbdprof::preload {

// One 8-byte-aligned word of the parameter buffer that the launch hook reads and compares with the
// allocated address range, precomputed per kernel so that a launch only loads, stores and compares:
// where the word is (parameter index, byte offset inside it) and the last 8 bytes of its
// RawPointerCandidate (param_index, param_offset, read_only, zero padding) ready to store as one word.
struct ScanWord {
    uint32_t param;
    uint32_t offset;
    uint64_t candidate_tail;

    static ScanWord make(size_t param, size_t offset, bool read_only) {
        return {static_cast<uint32_t>(param), static_cast<uint32_t>(offset),
                (param & 0xffff) | (offset & 0xffff) << 16 | static_cast<uint64_t>(read_only ? 1 : 0) << 32};
    }
};
static_assert(sizeof(ScanWord) == 16);

struct KernelInfo {
    static constexpr int kMaxParams = 128;
    static constexpr int kMaxScanWords = 128;
    uint64_t name_string = 0;
    uint64_t const_mask = 0;  // bit i: parameter i is a pointer to const
    uint16_t param_count = 0;  // parameters with a known layout (at most kMaxParams)
    bool layout_known = false;
    // `scan_words` lists every word of `kernelParams` to look at, in order; when the parameters hold
    // more than kMaxScanWords words (rare: large structs by value) the hook walks the layout instead.
    bool scan_words_complete = false;
    uint16_t scan_word_count = 0;
    // With scan_words_complete: bytes a launch record reserves (the record and a candidate per word).
    uint32_t listed_record_bytes = 0;
    uint16_t offsets[kMaxParams] = {};
    uint16_t sizes[kMaxParams] = {};
    ScanWord scan_words[kMaxScanWords] = {};
};

// The info of `function`: from the table, or computed into a per-thread scratch copy (another thread
// is still filling the entry in, or the table is full). Valid until this thread's next call.
const KernelInfo& kernel_info_from_table(collector::ThreadState& thread, CUfunction function);

// Each thread remembers the table entries of the last kernels it launched (a training loop launches
// the same few kernels over and over): a hit is a load, two compares and no hashing or probing.
struct RecentKernel {
    uintptr_t key = 0;
    uint64_t epoch = 0;
    const KernelInfo* info = nullptr;
};
inline constexpr size_t kRecentKernels = 16;
extern thread_local constinit RecentKernel t_recent_kernels[kRecentKernels];
extern std::atomic<uint64_t> g_unload_epoch;  // bumped by forget_kernel_layouts()

inline const KernelInfo& kernel_info(collector::ThreadState& thread, CUfunction function) {
    const auto key = reinterpret_cast<uintptr_t>(function);
    const RecentKernel& recent = t_recent_kernels[(key >> 4) % kRecentKernels];
    if (recent.key == key && recent.epoch == g_unload_epoch.load(std::memory_order_acquire)) [[likely]]
        return *recent.info;
    return kernel_info_from_table(thread, function);
}

// After cuModuleUnload/cuLibraryUnload: every entry is described again at its next launch (a later
// module may reuse a function's address for a kernel with another name and parameter layout).
void forget_kernel_layouts();

// Launches whose kernel found no room in the catalog (more than about 129 000 distinct kernels):
// each described its kernel through the driver again.
uint64_t kernel_catalog_misses();

}  // namespace tbdprof::preload
