// Handing driver entry points to applications (PyTorch and others call driver functions that the
// runtime does not wrap this way), export tables, and the profiler control no-ops.
#include <cuda_profiler_api.h>

#include "context.h"

using namespace tbdsim::rt;

extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                                              unsigned long long flags,
                                                              cudaDriverEntryPointQueryResult* driverStatus);
TBDSIM_CUDART_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr,
                                                                       unsigned int cudaVersion,
                                                                       unsigned long long flags,
                                                                       cudaDriverEntryPointQueryResult* driverStatus);
}

namespace {

constexpr unsigned long long kEntryPointFlagMask = cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream;

// cudaEnable* flags are the CU_GET_PROC_ADDRESS_* flags; "default" means the stream semantics the
// caller was compiled with, which is what the plain vs _ptsz entry point tells us.
cudaError_t entry_point(const char* symbol, void** function, unsigned cuda_version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* status, bool per_thread) {
    if (symbol == nullptr || function == nullptr || (flags & ~kEntryPointFlagMask) != 0) {
        return record_error(cudaErrorInvalidValue);
    }
    return api_call_without_context([&](const DriverApi& api) -> cudaError_t {
        if (flags == cudaEnableDefault) {
            flags = per_thread ? cudaEnablePerThreadDefaultStream : cudaEnableLegacyStream;
        }
        int driver_version = 0;
        cudaError_t error = call_driver(api.cuDriverGetVersion, &driver_version);
        if (error != cudaSuccess) return error;
        if (static_cast<int>(cuda_version) > driver_version) return cudaErrorInvalidValue;
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        *function = nullptr;
        const CUresult result =
            api.getProcAddress(symbol, function, static_cast<int>(cuda_version), flags, &found);
        if (status != nullptr) *status = static_cast<cudaDriverEntryPointQueryResult>(found);
        // Documented: an unknown symbol or insufficient version is success with a null pointer.
        if (result == CUDA_ERROR_NOT_FOUND || found != CU_GET_PROC_ADDRESS_SUCCESS) {
            *function = nullptr;
            return cudaSuccess;
        }
        return to_runtime_error(result);
    });
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                                         cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, false);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr, unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, true);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                                  unsigned int cudaVersion, unsigned long long flags,
                                                                  cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, false);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, true);
}

// The runtime has no private tables of its own here; the driver's (e.g. the simulator's private
// API) are reachable through it, as tools expect.
TBDSIM_CUDART_EXPORT cudaError_t cudaGetExportTable(const void** ppExportTable, const cudaUUID_t* pExportTableId) {
    if (ppExportTable == nullptr || pExportTableId == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call_without_context([&](const DriverApi& api) {
        return call_driver(api.cuGetExportTable, ppExportTable, reinterpret_cast<const CUuuid*>(pExportTableId));
    });
}

// Profiling is controlled by the tools attached to the simulated driver; these only mark intent.
TBDSIM_CUDART_EXPORT cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
TBDSIM_CUDART_EXPORT cudaError_t cudaProfilerStop(void) { return cudaSuccess; }
