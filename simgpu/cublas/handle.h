// The cuBLAS handle: the context it was created in, its module of GEMM kernels, its stream, its
// workspace and its modes. Real cuBLAS binds a handle to the device current at creation.
#pragma once

#include <cublas_api.h>
#include <cuda.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "bound_context.h"
#include "driver_entry_points.h"
#include "kernel_catalog.h"

// The header declares the opaque struct in the global namespace; this is its definition.
struct cublasContext {
    const tbdsim::blas::DriverEntryPoints* driver = nullptr;
    tbdsim::blas::BoundContext bound;
    CUmodule module = nullptr;
    tbdsim::blas::KernelTable kernels{};
    // Level-1/2 kernels (vector_launch.cpp), by operation (plus a last row for transposed gemv) and
    // data type, looked up in `module` on first use.
    CUfunction vector_kernels[9][4] = {};
    CUstream stream = nullptr;  // null: the legacy default stream, as for real cuBLAS

    // Real cuBLAS allocates for each handle in cublasCreate, through the driver, and frees at
    // cublasDestroy: two small buffers of its own and the default workspace (docs/simgpu.md, "cuBLAS
    // handles"); cublasSetWorkspace replaces the workspace's use, cublasSetStream switches back.
    CUdeviceptr own_buffers[2] = {};
    CUdeviceptr default_workspace = 0;
    std::size_t default_workspace_bytes = 0;
    void* user_workspace = nullptr;
    std::size_t user_workspace_bytes = 0;
    bool using_user_workspace = false;

    cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
    cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
    cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;

    // Kernels of the generic routine families (routine_launch.cpp), by name, looked up on first use.
    std::mutex routine_kernels_mutex;
    std::unordered_map<std::string, CUfunction> routine_kernels;

    // Settings stored and returned as documented (helpers_api.cpp); the cost model does not use them.
    int sm_count_target = 0;  // 0: all SMs
    cublasEmulationStrategy_t emulation_strategy = CUBLAS_EMULATION_STRATEGY_DEFAULT;
    cudaEmulationSpecialValuesSupport emulation_special_values = CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_DEFAULT;
    cudaEmulationMantissaControl mantissa_control = CUDA_EMULATION_MANTISSA_CONTROL_DYNAMIC;
    int max_mantissa_bit_count = 0;
    int mantissa_bit_offset = 0;
    int* mantissa_bit_count_pointer = nullptr;

    void* workspace() const {
        return using_user_workspace ? user_workspace : reinterpret_cast<void*>(default_workspace);
    }
    std::size_t workspace_bytes() const {
        return using_user_workspace ? user_workspace_bytes : default_workspace_bytes;
    }
};

namespace tbdsim::cublas {
// What cublasCreate allocates, in this order, on a device of compute capability `major`.x.
// sm_90 and newer: what cuBLAS 13 allocated on the real H200 (1 KiB, 128 KiB, 64 MiB). Older
// devices, never observed: the same two small buffers and the 4 MiB the cublasSetWorkspace
// documentation recommends as workspace there.
struct HandleAllocations {
    std::size_t own_bytes[2];
    std::size_t workspace_bytes;
};
inline constexpr HandleAllocations handle_allocations(int major) {
    return major >= 9 ? HandleAllocations{{1u << 10, 128u << 10}, 64u << 20}
                      : HandleAllocations{{1u << 10, 128u << 10}, 4u << 20};
}
}  // namespace tbdsim::cublas
