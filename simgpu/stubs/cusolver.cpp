// The modelled part of the simulated libcusolver.so.12: versions and dense-solver handles with their
// streams, so that a program (or framework) that creates a cuSOLVER handle at start-up runs. Every
// solver routine returns CUSOLVER_STATUS_NOT_SUPPORTED (the generated stubs).
#include <cusolverDn.h>

#include <new>

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cusolverDnContext {
    cudaStream_t stream = nullptr;
};

TBD_EXPORT cusolverStatus_t cusolverGetVersion(int* version) {
    if (version == nullptr) return CUSOLVER_STATUS_INVALID_VALUE;
    *version = CUSOLVER_VERSION;
    return CUSOLVER_STATUS_SUCCESS;
}

TBD_EXPORT cusolverStatus_t cusolverGetProperty(libraryPropertyType type, int* value) {
    if (value == nullptr) return CUSOLVER_STATUS_INVALID_VALUE;
    switch (type) {
        case MAJOR_VERSION:
            *value = CUSOLVER_VER_MAJOR;
            return CUSOLVER_STATUS_SUCCESS;
        case MINOR_VERSION:
            *value = CUSOLVER_VER_MINOR;
            return CUSOLVER_STATUS_SUCCESS;
        case PATCH_LEVEL:
            *value = CUSOLVER_VER_PATCH;
            return CUSOLVER_STATUS_SUCCESS;
        default:
            return CUSOLVER_STATUS_INVALID_VALUE;
    }
}

TBD_EXPORT cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
    if (handle == nullptr) return CUSOLVER_STATUS_INVALID_VALUE;
    *handle = new (std::nothrow) cusolverDnContext;
    return *handle != nullptr ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_ALLOC_FAILED;
}

TBD_EXPORT cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUSOLVER_STATUS_SUCCESS;
}

TBD_EXPORT cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUSOLVER_STATUS_SUCCESS;
}

TBD_EXPORT cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (stream == nullptr) return CUSOLVER_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUSOLVER_STATUS_SUCCESS;
}
