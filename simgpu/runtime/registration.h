// What nvcc-generated code registers with the runtime before main(): fat binaries, the host stub of
// every __global__ function and every __device__/__constant__/__managed__ variable. Driver work is
// deferred: a fat binary becomes a CUlibrary (cuLibraryLoadData) the first time one of its kernels or
// variables is needed, which is after the driver has been initialised by a runtime call.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tbdsim::rt {

// The CUkernel of a registered host stub, or a cudaKernel_t this runtime handed out. Loads the
// driver and the stub's fat binary when needed. cudaErrorInvalidDeviceFunction for unknown pointers.
cudaError_t kernel_for_host_function(const void* host_function_or_kernel, CUkernel* kernel);

// The CUfunction of a registered kernel in the current context (the caller binds the context).
cudaError_t function_in_current_context(const void* host_function_or_kernel, CUfunction* function);

// The mangled device name of a registered host stub; nullptr when unknown.
const char* device_name_of(const void* host_function_or_kernel);

// Address and size of a registered __device__ variable in the current context
// (cudaErrorInvalidSymbol when `symbol` is not the host shadow of a registered variable).
cudaError_t variable_address(const void* symbol, CUdeviceptr* address, size_t* size);

}  // namespace tbdsim::rt
