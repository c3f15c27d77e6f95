#include "kernel_catalog.h"

#include <sys/mman.h>

#include <atomic>

#include "hook_registry.h"
#include "tbdprof/collector/mangled_params.h"

namespace tbdprof::preload {

std::atomic<uint64_t> g_unload_epoch{0};
thread_local constinit RecentKernel t_recent_kernels[kRecentKernels];

namespace {

// The catalog grows: level 0 has 2048 slots, each further level twice as many, made (mmap) by the
// first launch that finds the levels before it full. 6 levels hold about 129 000 kernels; beyond
// that a launch describes its kernel into a per-thread scratch copy each time, and counts a miss.
constexpr size_t kFirstLevelSlots = 2048;
constexpr int kLevels = 6;
constexpr int kMaxProbes = 32;

struct Slot {
    std::atomic<uintptr_t> key{0};
    std::atomic<bool> ready{false};
    std::atomic<uint64_t> epoch{0};  // g_unload_epoch when described
    KernelInfo info;
};

Slot g_first_level[kFirstLevelSlots];
std::atomic<Slot*> g_levels[kLevels] = {};
std::atomic<uint64_t> g_misses{0};
// Bumped by every module or library unload: a CUfunction address may then be reused by a kernel
// of a later module, whose name and parameter layout differ. Entries described before are stale.

size_t level_slots(int level) { return kFirstLevelSlots << level; }

Slot* level_table(int level, bool create) {
    if (level == 0) return g_first_level;
    Slot* table = g_levels[level].load(std::memory_order_acquire);
    if (table != nullptr || !create) return table;
    // Zero-filled pages are valid empty slots (key 0, not ready): no constructor needs to run.
    void* memory = mmap(nullptr, level_slots(level) * sizeof(Slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    if (memory == MAP_FAILED) return nullptr;
    Slot* fresh = static_cast<Slot*>(memory);
    if (!g_levels[level].compare_exchange_strong(table, fresh, std::memory_order_acq_rel)) {
        munmap(memory, level_slots(level) * sizeof(Slot));  // another thread made it first
        return table;
    }
    return fresh;
}

using FuncGetName = CUresult (*)(const char**, CUfunction);
using FuncGetParamInfo = CUresult (*)(CUfunction, size_t, size_t*, size_t*);

// The words the launch hook reads: those of each parameter that are 8-byte aligned in the parameter
// buffer (where a pointer, alone or inside a struct, must lie) and whole inside the parameter.
void list_scan_words(KernelInfo& info) {
    info.scan_word_count = 0;
    info.scan_words_complete = true;
    for (size_t i = 0; i < info.param_count; ++i) {
        const size_t first = (8 - info.offsets[i] % 8) % 8;
        const bool const_pointer = i < 64 && (info.const_mask >> i & 1) != 0;
        for (size_t offset = first; offset + 8 <= info.sizes[i]; offset += 8) {
            if (info.scan_word_count == KernelInfo::kMaxScanWords || offset >= (1u << 15) || i > 0xffff) {
                info.scan_words_complete = false;
                return;
            }
            info.scan_words[info.scan_word_count++] = ScanWord::make(i, offset, const_pointer && offset == 0);
        }
    }
    info.listed_record_bytes =
        static_cast<uint32_t>(sizeof(raw::RawLaunch) + info.scan_word_count * sizeof(raw::RawPointerCandidate));
}

void describe(collector::ThreadState& thread, CUfunction function, KernelInfo& info) {
    // cuKernelGet* accept a CUkernel, which the CUDA 12+ runtime may pass to cuLaunchKernel directly.
    static auto func_get_name = reinterpret_cast<FuncGetName>(real_driver_symbol("cuFuncGetName"));
    static auto kernel_get_name = reinterpret_cast<FuncGetName>(real_driver_symbol("cuKernelGetName"));
    static auto func_param_info = reinterpret_cast<FuncGetParamInfo>(real_driver_symbol("cuFuncGetParamInfo"));
    static auto kernel_param_info = reinterpret_cast<FuncGetParamInfo>(real_driver_symbol("cuKernelGetParamInfo"));

    const char* name = nullptr;
    if (func_get_name == nullptr || func_get_name(&name, function) != CUDA_SUCCESS || name == nullptr) {
        name = nullptr;
        if (kernel_get_name != nullptr && kernel_get_name(&name, function) != CUDA_SUCCESS) name = nullptr;
    }
    info.name_string = collector::intern_string(thread, name != nullptr ? name : "<unknown kernel>");
    info.const_mask = collector::const_pointer_parameters(name);

    FuncGetParamInfo param_info = func_param_info;
    size_t offset = 0, size = 0;
    if (param_info == nullptr || param_info(function, 0, &offset, &size) != CUDA_SUCCESS) {
        param_info = kernel_param_info;
        if (param_info != nullptr && param_info(function, 0, &offset, &size) != CUDA_SUCCESS) param_info = nullptr;
    }
    if (param_info == nullptr) {
        // Either no parameters or no way to know them: scan nothing rather than guess.
        info.layout_known = false;
        info.param_count = 0;
        info.scan_word_count = 0;
        info.scan_words_complete = false;
        return;
    }
    info.layout_known = true;
    int count = 0;
    for (size_t i = 0; count < KernelInfo::kMaxParams; ++i) {
        if (param_info(function, i, &offset, &size) != CUDA_SUCCESS) break;
        info.offsets[count] = static_cast<uint16_t>(offset);
        info.sizes[count] = static_cast<uint16_t>(size);
        ++count;
    }
    info.param_count = static_cast<uint16_t>(count);
    list_scan_words(info);
}

// A table entry, described and current: the next launches of this thread find it in its recent list.
const KernelInfo& remember(uintptr_t key, uint64_t epoch, const KernelInfo& info) {
    t_recent_kernels[(key >> 4) % kRecentKernels] = {key, epoch, &info};
    return info;
}

}  // namespace

const KernelInfo& kernel_info_from_table(collector::ThreadState& thread, CUfunction function) {
    static thread_local KernelInfo scratch;
    const auto key = reinterpret_cast<uintptr_t>(function);
    const uint64_t epoch = g_unload_epoch.load(std::memory_order_acquire);
    const size_t hash = static_cast<size_t>((key >> 4) * 0x9E3779B97F4A7C15ull >> 24);
    for (int level = 0; level < kLevels; ++level) {
        Slot* table = level_table(level, true);
        if (table == nullptr) break;
        const size_t mask = level_slots(level) - 1;
        size_t index = hash & mask;
        for (int probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & mask) {
            Slot& slot = table[index];
            uintptr_t current = slot.key.load(std::memory_order_acquire);
            if (current == key) {
                bool ready = slot.ready.load(std::memory_order_acquire);
                if (ready && slot.epoch.load(std::memory_order_acquire) == epoch) return remember(key, epoch, slot.info);
                // Described before an unload: describe again, by the one thread that takes it back.
                if (ready && slot.ready.compare_exchange_strong(ready, false, std::memory_order_acq_rel)) {
                    describe(thread, function, slot.info);
                    slot.epoch.store(epoch, std::memory_order_release);
                    slot.ready.store(true, std::memory_order_release);
                    return slot.info;
                }
                describe(thread, function, scratch);  // another thread is filling it in
                return scratch;
            }
            if (current == 0) {
                if (slot.key.compare_exchange_strong(current, key, std::memory_order_acq_rel)) {
                    describe(thread, function, slot.info);
                    slot.epoch.store(epoch, std::memory_order_release);
                    slot.ready.store(true, std::memory_order_release);
                    return slot.info;
                }
                if (current == key) {
                    describe(thread, function, scratch);
                    return scratch;
                }
            }
        }
    }
    g_misses.fetch_add(1, std::memory_order_relaxed);
    describe(thread, function, scratch);
    return scratch;
}

void forget_kernel_layouts() { g_unload_epoch.fetch_add(1, std::memory_order_acq_rel); }

uint64_t kernel_catalog_misses() { return g_misses.load(std::memory_order_relaxed); }

}  // namespace tbdprof::preload
