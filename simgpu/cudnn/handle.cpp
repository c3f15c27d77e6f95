// Handles, versions, status texts and the helpers every operation shares. A handle binds to the
// context current at creation (device 0's primary context if none, as real cuDNN does), loads its
// module of kernels and remembers the device's compute capability (it decides whether FP32
// convolutions may use TF32 tensor cores).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

namespace tbdsim::dnn {
namespace {

thread_local char t_last_error[256] = "";

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// cuDeviceGetAttribute is not among blas_common's entry points; found the same way they are.
int device_attribute(CUdevice device, CUdevice_attribute attribute, int fallback) {
    static const auto get_attribute = [] {
        void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        auto get_proc = driver ? reinterpret_cast<GetProcAddressFn>(dlsym(driver, "cuGetProcAddress_v2")) : nullptr;
        void* pointer = nullptr;
        CUdriverProcAddressQueryResult status{};
        if (get_proc == nullptr || get_proc("cuDeviceGetAttribute", &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                                            &status) != CUDA_SUCCESS) {
            pointer = nullptr;
        }
        return reinterpret_cast<decltype(&::cuDeviceGetAttribute)>(pointer);
    }();
    int value = fallback;
    if (get_attribute == nullptr || get_attribute(&value, attribute, device) != CUDA_SUCCESS) return fallback;
    return value;
}

}  // namespace

// The handle's own memory, allocated through the driver in the order the real cudnnCreate did.
bool allocate_handle_memory(cudnnContext& handle) {
    const blas::DriverEntryPoints& driver = *handle.driver;
    for (int i = 0; i < 2; ++i)
        if (driver.mem_alloc(&handle.own_device[i], kHandleDeviceBytes[i]) != CUDA_SUCCESS) return false;
    return driver.mem_alloc_host(&handle.own_pinned, kHandlePinnedBytes) == CUDA_SUCCESS;
}

void release_handle_memory(cudnnContext& handle) {
    const blas::DriverEntryPoints& driver = *handle.driver;
    for (CUdeviceptr own : handle.own_device)
        if (own != 0) driver.mem_free(own);
    if (handle.own_pinned != nullptr) driver.mem_free_host(handle.own_pinned);
}

cudnnStatus_t fail(cudnnStatus_t status, const char* message) {
    std::snprintf(t_last_error, sizeof(t_last_error), "%s", message);
    return status;
}

std::size_t element_bytes(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_FLOAT:
            return 4;
        case CUDNN_DATA_DOUBLE:
            return 8;
        case CUDNN_DATA_HALF:
        case CUDNN_DATA_BFLOAT16:
            return 2;
        case CUDNN_DATA_INT8:
        case CUDNN_DATA_UINT8:
            return 1;
        case CUDNN_DATA_INT32:
            return 4;
        case CUDNN_DATA_INT64:
            return 8;
        default:
            return 0;
    }
}

int64_t element_count(const cudnnTensorStruct& tensor) {
    int64_t count = tensor.dims > 0 ? 1 : 0;
    for (int i = 0; i < tensor.dims; ++i) count *= tensor.dim[i];
    return count;
}

double read_scalar(const void* value, cudnnDataType_t data_type) {
    if (value == nullptr) return 0;
    if (data_type == CUDNN_DATA_DOUBLE) return *static_cast<const double*>(value);
    return *static_cast<const float*>(value);
}

TbdsimPrecision convolution_precision(cudnnHandle_t handle, cudnnDataType_t data_type, cudnnMathType_t math) {
    switch (data_type) {
        case CUDNN_DATA_HALF:
            return TBDSIM_PRECISION_FP16;
        case CUDNN_DATA_BFLOAT16:
            return TBDSIM_PRECISION_BF16;
        case CUDNN_DATA_DOUBLE:
            return TBDSIM_PRECISION_FP64;
        default:
            break;
    }
    // cuDNN: from Ampere on, CUDNN_DEFAULT_MATH (and the tensor-op modes) permit TF32 for FP32 data,
    // CUDNN_FMA_MATH does not; NVIDIA_TF32_OVERRIDE=0 turns TF32 off process-wide.
    const char* override_tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
    if (override_tf32 != nullptr && std::strcmp(override_tf32, "0") == 0) return TBDSIM_PRECISION_FP32;
    if (math == CUDNN_FMA_MATH || handle->compute_capability_major < 8) return TBDSIM_PRECISION_FP32;
    return TBDSIM_PRECISION_TF32;
}

cudnnStatus_t run(cudnnHandle_t handle, const Launch& launch) {
    return dnn::launch(*handle->driver, handle->kernels, handle->stream, launch) == CUDA_SUCCESS
               ? CUDNN_STATUS_SUCCESS
               : fail(CUDNN_STATUS_EXECUTION_FAILED, "the kernel launch failed");
}

cudnnStatus_t run_elementwise(cudnnHandle_t handle, const Elementwise& work) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const int64_t elements = element_count(*work.out);
    Launch launch;
    launch.kernel = work.kernel;
    launch.threads = work.threads;
    launch.grid_x = work.grid_x != 0 ? work.grid_x : blocks_for(elements, work.threads);
    launch.flops = work.flops;
    launch.bytes = work.bytes;
    launch.precision = work.out->type == CUDNN_DATA_DOUBLE ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32;
    launch.params = work.params;
    launch.params.elements = elements;
    return run(handle, launch);
}

double tensor_bytes(const cudnnTensorStruct& tensor) {
    return static_cast<double>(element_count(tensor)) * static_cast<double>(element_bytes(tensor.type));
}

bool same_dims(const cudnnTensorStruct* a, const cudnnTensorStruct* b) {
    if (a == nullptr || b == nullptr || !a->set || !b->set || a->dims != b->dims) return false;
    for (int i = 0; i < a->dims; ++i) {
        if (a->dim[i] != b->dim[i]) return false;
    }
    return true;
}

}  // namespace tbdsim::dnn

extern "C" {

__attribute__((visibility("default"))) cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
    if (handle == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnCreate: handle is null");
    const blas::DriverEntryPoints* driver = blas::driver_entry_points();
    if (driver == nullptr) return dnn::fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate: libcuda.so.1 is not usable");
    auto* created = new (std::nothrow) cudnnContext;
    if (created == nullptr) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    created->driver = driver;
    if (!blas::bind_current_context(*driver, &created->bound)) {
        delete created;
        return dnn::fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate: no CUDA device");
    }
    CUdevice device = created->bound.device;
    created->compute_capability_major = dnn::device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9);
    created->sm_count = dnn::device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132);
    if (dnn::load_kernels(*driver, &created->module, &created->kernels) != CUDA_SUCCESS) {
        blas::release_bound_context(*driver, created->bound);
        delete created;
        return dnn::fail(CUDNN_STATUS_INTERNAL_ERROR, "cudnnCreate: cannot load the kernels");
    }
    if (!dnn::allocate_handle_memory(*created)) {
        dnn::release_handle_memory(*created);
        driver->module_unload(created->module);
        blas::release_bound_context(*driver, created->bound);
        delete created;
        return dnn::fail(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED,
                         "cudnnCreate: cannot allocate the handle's memory");
    }
    *handle = created;
    return CUDNN_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
    if (handle == nullptr) return CUDNN_STATUS_BAD_PARAM;
    dnn::release_handle_memory(*handle);
    if (handle->module != nullptr) handle->driver->module_unload(handle->module);
    blas::release_bound_context(*handle->driver, handle->bound);
    delete handle;
    return CUDNN_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUDNN_STATUS_BAD_PARAM;
    handle->stream = reinterpret_cast<CUstream>(stream);
    return CUDNN_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr || stream == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *stream = reinterpret_cast<cudaStream_t>(handle->stream);
    return CUDNN_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) size_t cudnnGetVersion(void) {
    return CUDNN_VERSION;
}
__attribute__((visibility("default"))) size_t cudnnGetMaxDeviceVersion(void) {
    return 1200;
}
__attribute__((visibility("default"))) size_t cudnnGetCudartVersion(void) {
    return CUDART_VERSION;
}

__attribute__((visibility("default"))) cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int* value) {
    if (value == nullptr) return CUDNN_STATUS_BAD_PARAM;
    switch (type) {
        case MAJOR_VERSION:
            *value = CUDNN_MAJOR;
            return CUDNN_STATUS_SUCCESS;
        case MINOR_VERSION:
            *value = CUDNN_MINOR;
            return CUDNN_STATUS_SUCCESS;
        case PATCH_LEVEL:
            *value = CUDNN_PATCHLEVEL;
            return CUDNN_STATUS_SUCCESS;
        default:
            return CUDNN_STATUS_BAD_PARAM;
    }
}

__attribute__((visibility("default"))) void cudnnGetLastErrorString(char* message, size_t max_size) {
    if (message == nullptr || max_size == 0) return;
    std::snprintf(message, max_size, "%s", dnn::t_last_error);
    dnn::t_last_error[0] = '\0';
}

__attribute__((visibility("default"))) const char* cudnnGetErrorString(cudnnStatus_t status) {
    switch (status) {
        case CUDNN_STATUS_SUCCESS:
            return "CUDNN_STATUS_SUCCESS";
        case CUDNN_STATUS_NOT_INITIALIZED:
            return "CUDNN_STATUS_NOT_INITIALIZED";
        case CUDNN_STATUS_BAD_PARAM:
            return "CUDNN_STATUS_BAD_PARAM";
        case CUDNN_STATUS_BAD_PARAM_NULL_POINTER:
            return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
        case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED:
            return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
        case CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH:
            return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
        case CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE:
            return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
        case CUDNN_STATUS_NOT_SUPPORTED:
            return "CUDNN_STATUS_NOT_SUPPORTED";
        case CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN:
            return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
        case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE:
            return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
        case CUDNN_STATUS_INTERNAL_ERROR:
            return "CUDNN_STATUS_INTERNAL_ERROR";
        case CUDNN_STATUS_EXECUTION_FAILED:
            return "CUDNN_STATUS_EXECUTION_FAILED";
        case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
            return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
        default:
            return "CUDNN_STATUS_UNKNOWN";
    }
}

}  // extern "C"
