// Queries and settings of registered kernels: attributes, parameter layout, handles, names, occupancy.
#include "context.h"
#include "registration.h"

using namespace tbdsim::rt;

namespace {

int function_attribute(const DriverApi& api, CUfunction function, CUfunction_attribute attribute) {
    int value = 0;
    if (api.cuFuncGetAttribute == nullptr || api.cuFuncGetAttribute(&value, attribute, function) != CUDA_SUCCESS) {
        return 0;
    }
    return value;
}

}  // namespace

TBDSIM_CUDART_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
    if (attr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUfunction function = nullptr;
        cudaError_t error = function_in_current_context(func, &function);
        if (error != cudaSuccess) return error;
        cudaFuncAttributes filled{};
        auto get = [&](CUfunction_attribute attribute) { return function_attribute(api, function, attribute); };
        filled.sharedSizeBytes = static_cast<size_t>(get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
        filled.constSizeBytes = static_cast<size_t>(get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES));
        filled.localSizeBytes = static_cast<size_t>(get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
        filled.maxThreadsPerBlock = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        filled.numRegs = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
        filled.ptxVersion = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
        filled.binaryVersion = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
        filled.cacheModeCA = get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
        filled.maxDynamicSharedSizeBytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
        filled.preferredShmemCarveout = get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
        filled.clusterDimMustBeSet = get(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET);
        filled.requiredClusterWidth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
        filled.requiredClusterHeight = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT);
        filled.requiredClusterDepth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
        filled.clusterSchedulingPolicyPreference = get(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
        filled.nonPortableClusterSizeAllowed = get(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
        *attr = filled;
        return cudaSuccess;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUfunction function = nullptr;
        cudaError_t error = function_in_current_context(func, &function);
        if (error != cudaSuccess) return error;
        // cudaFuncAttribute values are the settable CUfunction_attribute values.
        return call_driver(api.cuFuncSetAttribute, function, static_cast<CUfunction_attribute>(attr), value);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig) {
    if (cacheConfig < cudaFuncCachePreferNone || cacheConfig > cudaFuncCachePreferEqual) {
        return record_error(cudaErrorInvalidValue);
    }
    // A preference only; the simulated device has no configurable L1/shared split to change.
    return api_call(false, [&](const DriverApi&) {
        CUkernel kernel = nullptr;
        return kernel_for_host_function(func, &kernel);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaFuncGetParamInfo(const void* func, size_t paramIndex, size_t* paramOffset,
                                                      size_t* paramSize) {
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUfunction function = nullptr;
        cudaError_t error = function_in_current_context(func, &function);
        if (error != cudaSuccess) return error;
        return call_driver(api.cuFuncGetParamInfo, function, paramIndex, paramOffset, paramSize);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaFuncGetName(const char** name, const void* func) {
    if (name == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi&) -> cudaError_t {
        const char* device_name = device_name_of(func);
        if (device_name == nullptr) return cudaErrorInvalidDeviceFunction;
        *name = device_name;
        return cudaSuccess;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
    if (functionPtr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi&) -> cudaError_t {
        CUfunction function = nullptr;
        cudaError_t error = function_in_current_context(symbolPtr, &function);
        if (error == cudaSuccess) *functionPtr = function;
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
    if (kernelPtr == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi&) -> cudaError_t {
        CUkernel kernel = nullptr;
        cudaError_t error = kernel_for_host_function(entryFuncAddr, &kernel);
        if (error == cudaSuccess) *kernelPtr = reinterpret_cast<cudaKernel_t>(kernel);
        return error;
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks,
                                                                                       const void* func,
                                                                                       int blockSize,
                                                                                       size_t dynamicSMemSize,
                                                                                       unsigned int flags) {
    if (numBlocks == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        CUfunction function = nullptr;
        cudaError_t error = function_in_current_context(func, &function);
        if (error != cudaSuccess) return error;
        return call_driver(api.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, numBlocks, function, blockSize,
                           dynamicSMemSize, flags);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                                              int blockSize,
                                                                              size_t dynamicSMemSize) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                  cudaOccupancyDefault);
}
