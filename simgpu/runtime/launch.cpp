// Kernel launches: the <<<>>> call-configuration stack, the CUDA 13 handle-based launch path
// (__cudaGetKernel + __cudaLaunchKernel), cudaLaunchKernel/ExC/Cooperative and their _ptsz variants.
#include <cstring>
#include <vector>

#include "context.h"
#include "registration.h"

using namespace tbdsim::rt;

// Per-thread-default-stream variants: the header declares them only when a program is compiled with
// --default-stream per-thread, but the library exports both.
extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                       size_t sharedMem, cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                                          void** args);
TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim,
                                                                  void** args, size_t sharedMem,
                                                                  cudaStream_t stream);
}

namespace {

struct CallConfiguration {
    dim3 grid;
    dim3 block;
    size_t shared_memory;
    cudaStream_t stream;
};

// <<<>>> pushes, the generated stub pops; nested launches inside argument expressions make it a stack.
thread_local std::vector<CallConfiguration> t_call_configurations;

// Limits every device of compute capability 3.0 and later shares; beyond them the real runtime
// rejects the launch with cudaErrorInvalidConfiguration before reaching the driver.
bool configuration_is_valid(dim3 grid, dim3 block) {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) return false;
    if (grid.x > 0x7fffffffu || grid.y > 65535u || grid.z > 65535u) return false;
    if (block.x > 1024u || block.y > 1024u || block.z > 64u) return false;
    return static_cast<unsigned long long>(block.x) * block.y * block.z <= 1024ull;
}

cudaError_t launch(bool per_thread, const void* function, dim3 grid, dim3 block, void** args, size_t shared_memory,
                   cudaStream_t stream, bool cooperative) {
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        CUkernel kernel = nullptr;
        cudaError_t error = kernel_for_host_function(function, &kernel);
        if (error != cudaSuccess) return error;
        if (!configuration_is_valid(grid, block)) return cudaErrorInvalidConfiguration;
        // Since CUDA 12 the driver accepts a CUkernel wherever a CUfunction is expected.
        auto* as_function = reinterpret_cast<CUfunction>(kernel);
        const auto shared = static_cast<unsigned>(shared_memory);
        if (cooperative) {
            return call_driver(api.cuLaunchCooperativeKernel, as_function, grid.x, grid.y, grid.z, block.x,
                               block.y, block.z, shared, stream, args);
        }
        return call_driver(api.cuLaunchKernel, as_function, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared,
                           stream, args, nullptr);
    });
}

cudaError_t launch_ex(bool per_thread, const cudaLaunchConfig_t* config, const void* function, void** args) {
    if (config == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t {
        CUkernel kernel = nullptr;
        cudaError_t error = kernel_for_host_function(function, &kernel);
        if (error != cudaSuccess) return error;
        if (!configuration_is_valid(config->gridDim, config->blockDim)) return cudaErrorInvalidConfiguration;
        // cudaLaunchAttribute is laid out as CUlaunchAttribute and uses the same ids and values.
        static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute));
        CUlaunchConfig driver_config{};
        driver_config.gridDimX = config->gridDim.x;
        driver_config.gridDimY = config->gridDim.y;
        driver_config.gridDimZ = config->gridDim.z;
        driver_config.blockDimX = config->blockDim.x;
        driver_config.blockDimY = config->blockDim.y;
        driver_config.blockDimZ = config->blockDim.z;
        driver_config.sharedMemBytes = static_cast<unsigned>(config->dynamicSmemBytes);
        driver_config.hStream = config->stream;
        driver_config.attrs = reinterpret_cast<CUlaunchAttribute*>(config->attrs);
        driver_config.numAttrs = config->numAttrs;
        return call_driver(api.cuLaunchKernelEx, &driver_config, reinterpret_cast<CUfunction>(kernel), args, nullptr);
    });
}

}  // namespace

// ---- <<<>>> support --------------------------------------------------------------------------------
// (C linkage: crt/device_functions.h and crt/host_runtime.h declare them, but only for nvcc.)

extern "C" {

TBDSIM_CUDART_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                          struct CUstream_st* stream) {
    t_call_configurations.push_back({gridDim, blockDim, sharedMem, stream});
    return 0;
}

TBDSIM_CUDART_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                                            void* stream) {
    if (t_call_configurations.empty()) return cudaErrorMissingConfiguration;
    const CallConfiguration configuration = t_call_configurations.back();
    t_call_configurations.pop_back();
    *gridDim = configuration.grid;
    *blockDim = configuration.block;
    *sharedMem = configuration.shared_memory;
    *static_cast<cudaStream_t*>(stream) = configuration.stream;
    return cudaSuccess;
}

TBDSIM_CUDART_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFunction) {
    if (kernel == nullptr) return record_error(cudaErrorInvalidValue);
    cudaError_t error = driver_init();
    CUkernel resolved = nullptr;
    if (error == cudaSuccess) error = kernel_for_host_function(hostFunction, &resolved);
    if (error == cudaSuccess) *kernel = reinterpret_cast<cudaKernel_t>(resolved);
    return record_error(error);
}

TBDSIM_CUDART_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                                    size_t sharedMem, cudaStream_t stream) {
    return launch(false, kernel, gridDim, blockDim, args, sharedMem, stream, false);
}

TBDSIM_CUDART_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                         void** args, size_t sharedMem, cudaStream_t stream) {
    return launch(true, kernel, gridDim, blockDim, args, sharedMem, stream, false);
}

}  // extern "C"

// ---- public launch API ------------------------------------------------------------------------------

TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                  size_t sharedMem, cudaStream_t stream) {
    return launch(false, func, gridDim, blockDim, args, sharedMem, stream, false);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem,
                                  cudaStream_t stream) {
    return launch(true, func, gridDim, blockDim, args, sharedMem, stream, false);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                                     void** args) {
    return launch_ex(false, config, func, args);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) {
    return launch_ex(true, config, func, args);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                                             void** args, size_t sharedMem, cudaStream_t stream) {
    return launch(false, func, gridDim, blockDim, args, sharedMem, stream, true);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                             size_t sharedMem, cudaStream_t stream) {
    return launch(true, func, gridDim, blockDim, args, sharedMem, stream, true);
}
