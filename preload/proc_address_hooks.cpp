// cuGetProcAddress and cuGetProcAddress_v2: how the runtime, cuBLAS, cuDNN and NCCL find every driver
// function. The real lookup runs first with the caller's exact arguments (so version and
// per-thread-stream semantics are the driver's); then a pointer to a function we record is swapped for
// our wrapper of that exact variant. Asking for cuGetProcAddress itself returns these wrappers.
#include "hook_support.h"

namespace tbdprof::preload {
namespace {

using GetProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcAddressLegacy = CUresult (*)(const char*, void**, int, cuuint64_t);

constinit RealFunction<GetProcAddressV2> real_get_proc_address_v2{"cuGetProcAddress_v2"};
constinit RealFunction<GetProcAddressLegacy> real_get_proc_address{"cuGetProcAddress"};

void substitute(void** pfn, const void* caller) {
    if (pfn == nullptr || *pfn == nullptr || !collector::collector_enabled()) return;
    *pfn = substitute_proc_address(*pfn, path_of_caller(caller));
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;

extern "C" TBD_VISIBLE CUresult export_cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                                           cuuint64_t flags, CUdriverProcAddressQueryResult* status)
    __asm__("cuGetProcAddress_v2");
extern "C" CUresult export_cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                               CUdriverProcAddressQueryResult* status) {
    auto real = real_get_proc_address_v2.get();
    if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
    const CUresult result = real(symbol, pfn, version, flags, status);
    if (result == CUDA_SUCCESS) substitute(pfn, __builtin_return_address(0));
    return result;
}

extern "C" TBD_VISIBLE CUresult export_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags)
    __asm__("cuGetProcAddress");
extern "C" CUresult export_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
    auto real = real_get_proc_address.get();
    if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
    const CUresult result = real(symbol, pfn, version, flags);
    if (result == CUDA_SUCCESS) substitute(pfn, __builtin_return_address(0));
    return result;
}

namespace tbdprof::preload {

void add_proc_address_hooks(std::vector<HookedSymbol>& out) {
    // One wrapper for every path: each finds its caller's path itself.
    auto* v2 = reinterpret_cast<void*>(&export_cuGetProcAddress_v2);
    auto* legacy = reinterpret_cast<void*>(&export_cuGetProcAddress);
    out.push_back({"cuGetProcAddress_v2", [] { return reinterpret_cast<void*>(real_get_proc_address_v2.get()); },
                   {nullptr, v2, v2, v2, nullptr}});
    out.push_back({"cuGetProcAddress", [] { return reinterpret_cast<void*>(real_get_proc_address.get()); },
                   {nullptr, legacy, legacy, legacy, nullptr}});
}

}  // namespace tbdprof::preload
