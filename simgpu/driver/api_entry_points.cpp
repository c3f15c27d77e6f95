// cuGetProcAddress, cuGetExportTable and the error-string functions: how libraries find the driver.
// The runtime, cuBLAS, cuDNN and NCCL resolve every driver function through cuGetProcAddress with a
// base name, the CUDA version they were built for, and per-thread-stream flags.
#include "driver_api.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tbdsim::driver;

namespace {

#include "error_texts.inc"

using AnyFunction = void (*)();

// Each exported symbol under an internal name: asm labels bind straight to the symbol, whatever
// names cuda.h's macros give it, and -Bsymbolic keeps the binding inside this library. The table is
// generated from cudaTypedefs.h (simgpu/exports/gen_exports.py); symbols the driver does not model
// are the generated "unsupported" stubs (exports_cuda.cpp), which tbdsim_is_stub recognises.
extern "C" bool tbdsim_is_stub(const void* function);
#define ENTRY(name, version, symbol, same_as) extern "C" void proc_##symbol() __asm__(#symbol);
#define ENTRY_PT(name, version, symbol, pt_symbol, same_as)                                         \
    extern "C" void proc_##symbol() __asm__(#symbol);                                               \
    extern "C" void proc_##pt_symbol() __asm__(#pt_symbol);
#include "proc_table.inc"
#undef ENTRY
#undef ENTRY_PT

struct ProcEntry {
    const char* name;
    int version;
    AnyFunction function;
    AnyFunction per_thread;  // null when the entry point takes no stream
    AnyFunction same_as;     // the newest entry point of this name with the same signature
};

const ProcEntry kProcTable[] = {
#define ENTRY(name, version, symbol, same_as) {#name, version, proc_##symbol, nullptr, proc_##same_as},
#define ENTRY_PT(name, version, symbol, pt_symbol, same_as)                                         \
    {#name, version, proc_##symbol, proc_##pt_symbol, proc_##same_as},
#include "proc_table.inc"
#undef ENTRY
#undef ENTRY_PT
};

bool unsupported(AnyFunction f) {
    return tbdsim_is_stub(reinterpret_cast<const void*>(f));
}

CUresult lookup(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
    auto set_status = [&](CUdriverProcAddressQueryResult s) {
        if (status) *status = s;
    };
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~cuuint64_t(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = nullptr;
    const ProcEntry* best = nullptr;
    bool name_known = false;
    for (const auto& entry : kProcTable) {
        if (std::strcmp(entry.name, symbol) != 0) continue;
        name_known = true;
        if (entry.version <= cuda_version && (!best || entry.version > best->version)) best = &entry;
    }
    if (!best) {
        set_status(name_known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        return CUDA_ERROR_NOT_FOUND;
    }
    bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    AnyFunction f = per_thread && best->per_thread ? best->per_thread : best->function;
    // An older version whose signature a newer one kept (cuDeviceGetUuid at 9020,
    // cuDevicePrimaryCtxRelease at 7000): the real driver answers it with the same implementation.
    if (unsupported(f) && !unsupported(best->same_as)) f = best->same_as;
    *pfn = reinterpret_cast<void*>(f);
    set_status(CU_GET_PROC_ADDRESS_SUCCESS);
    return CUDA_SUCCESS;
}

// TBDSIM_PRIVATE_TABLE_MARK=PATH: created (once, with this process id and the file that asked, as
// `PID<TAB>FILE`) at the first request for a private table, so that tbdprof can say why the program
// failed and which library carries the static runtime (a launcher script is not to blame).
void note_private_table_request(const void* caller) {
    static std::atomic<bool> noted{false};
    if (noted.exchange(true)) return;
    const char* path = std::getenv("TBDSIM_PRIVATE_TABLE_MARK");
    if (path == nullptr || *path == '\0') return;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    Dl_info info{};
    const char* file = dladdr(caller, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
    char line[4200];
    int n = std::snprintf(line, sizeof line, "%d\t%s\n", static_cast<int>(getpid()), file);
    if (n > 0) (void)!write(fd, line, std::min(static_cast<size_t>(n), sizeof line - 1));
    close(fd);
}

}  // namespace

SIM_API CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version,
                                             cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
    return lookup(symbol, pfn, cuda_version, flags, status);
}

// The CUDA 11.3 form, without the status argument; cuda.h renames the plain name to _v2.
extern "C" CUresult legacy_get_proc_address(const char*, void**, int, cuuint64_t) __asm__("cuGetProcAddress");
SIM_API CUresult legacy_get_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
    return lookup(symbol, pfn, cuda_version, flags, nullptr);
}

SIM_API CUresult CUDAAPI cuGetExportTable(const void** table, const CUuuid* id) {
    if (!table || !id) return CUDA_ERROR_INVALID_VALUE;
    if (std::memcmp(id->bytes, TBDSIM_PRIVATE_API_ID.bytes, sizeof id->bytes) == 0) {
        *table = private_api();
        return CUDA_SUCCESS;
    }
    // NVIDIA's own private tables (asked for by the real runtime and libraries) are not modelled.
    // Only NVIDIA's closed code asks for them; with the simulated libraries in place that is the
    // static runtime linked into the program (nvcc's default). A profiler running the program tells
    // the user so: it names a file here to be created when that happens.
    note_private_table_request(__builtin_return_address(0));
    *table = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult CUDAAPI cuGetErrorString(CUresult error, const char** text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    for (const auto& e : kErrorTexts)
        if (e.code == error) {
            *text = e.description;
            return CUDA_SUCCESS;
        }
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}

SIM_API CUresult CUDAAPI cuGetErrorName(CUresult error, const char** text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    for (const auto& e : kErrorTexts)
        if (e.code == error) {
            *text = e.name;
            return CUDA_SUCCESS;
        }
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}
