#include "kernel_catalog.h"

#include <atomic>

#include "hook_registry.h"
#include "tbdprof/collector/mangled_params.h"

namespace tbdprof::preload {
namespace {

constexpr size_t kSlots = 2048;
constexpr int kMaxProbes = 32;

struct Slot {
    std::atomic<uintptr_t> key{0};
    std::atomic<bool> ready{false};
    KernelInfo info;
};

Slot g_slots[kSlots];

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
}

void describe(collector::ThreadState& ts, CUfunction function, KernelInfo& info) {
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
    info.name_string = collector::intern_string(ts, name != nullptr ? name : "<unknown kernel>");
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

}  // namespace

const KernelInfo& kernel_info(collector::ThreadState& ts, CUfunction function) {
    static thread_local KernelInfo scratch;
    const auto key = reinterpret_cast<uintptr_t>(function);
    size_t index = static_cast<size_t>((key >> 4) * 0x9E3779B97F4A7C15ull >> 40) & (kSlots - 1);
    for (int probe = 0; probe < kMaxProbes; ++probe, index = (index + 1) & (kSlots - 1)) {
        Slot& slot = g_slots[index];
        uintptr_t current = slot.key.load(std::memory_order_acquire);
        if (current == key) {
            if (slot.ready.load(std::memory_order_acquire)) return slot.info;
            break;  // another thread is filling it in
        }
        if (current == 0) {
            if (slot.key.compare_exchange_strong(current, key, std::memory_order_acq_rel)) {
                describe(ts, function, slot.info);
                slot.ready.store(true, std::memory_order_release);
                return slot.info;
            }
            if (current == key) break;
        }
    }
    describe(ts, function, scratch);
    return scratch;
}

}  // namespace tbdprof::preload
