// What the legacy cuDNN hooks (cudnn_hook_support.h) and the backend's (cudnn_backend_hooks.cpp)
// share: the handle's stream at a call, and cuDNN's data types as cudaDataType values (as the
// library_calls columns hold them) and as bytes per element.
#pragma once

#include <cudnn.h>

#include <cstdint>

#include "library_call.h"

namespace tbdprof::preload {

inline LibraryFunction<decltype(&cudnnGetStream)> real_get_stream{"cudnnGetStream"};

// The handle's stream (the default stream when it cannot be asked).
inline cudaStream_t cudnn_stream_of(cudnnHandle_t handle) {
    cudaStream_t stream = nullptr;
    if (auto get_stream = real_get_stream.get(); get_stream != nullptr && handle != nullptr)
        get_stream(handle, &stream);
    return stream;
}

// cudaDataType_t (library_types.h) of a cuDNN data type; 0xff for one without a match here.
inline uint8_t cuda_type_of(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_FLOAT:
            return CUDA_R_32F;
        case CUDNN_DATA_DOUBLE:
            return CUDA_R_64F;
        case CUDNN_DATA_HALF:
            return CUDA_R_16F;
        case CUDNN_DATA_BFLOAT16:
            return CUDA_R_16BF;
        case CUDNN_DATA_INT8:
            return CUDA_R_8I;
        case CUDNN_DATA_INT32:
            return CUDA_R_32I;
        default:
            return 0xff;
    }
}

// Bytes per element; 0 for a type not known here.
inline int64_t element_bytes(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_INT8:
            return 1;
        case CUDNN_DATA_HALF:
        case CUDNN_DATA_BFLOAT16:
            return 2;
        case CUDNN_DATA_FLOAT:
        case CUDNN_DATA_INT32:
            return 4;
        case CUDNN_DATA_DOUBLE:
        case CUDNN_DATA_INT64:
            return 8;
        default:
            return 0;
    }
}

}  // namespace tbdprof::preload
