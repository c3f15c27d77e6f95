// cuBLAS's helper functions: host <-> device copies of vectors and matrices (as the driver's 2D copies
// they are, so the device timeline shows them), the logger, cublasXerbla, and the per-handle
// settings that only store and return values (SM count target, emulation controls).
#include <cublas_api.h>

#include <cstdint>
#include <cstdio>
#include <mutex>

#include "driver_entry_points.h"
#include "handle.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// A strided copy of `rows` x `cols` elements of `elem_size` bytes: each column of `rows` contiguous
// elements (a vector is rows = 1 element per column, `cols` = n, pitches = increments).
cublasStatus_t copy_2d(int64_t width_elems, int64_t height, int64_t elem_size, const void* src, int64_t src_pitch,
                       void* dst, int64_t dst_pitch, bool to_device, cudaStream_t stream, bool async) {
    if (width_elems < 0 || height < 0 || elem_size <= 0 || src_pitch <= 0 || dst_pitch <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (width_elems > src_pitch || width_elems > dst_pitch) return CUBLAS_STATUS_INVALID_VALUE;
    if (width_elems == 0 || height == 0) return CUBLAS_STATUS_SUCCESS;
    const tbdsim::blas::DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = to_device ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    copy.dstMemoryType = to_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    if (to_device)
        copy.srcHost = src, copy.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
    else
        copy.srcDevice = reinterpret_cast<CUdeviceptr>(src), copy.dstHost = dst;
    copy.srcPitch = static_cast<size_t>(src_pitch * elem_size);
    copy.dstPitch = static_cast<size_t>(dst_pitch * elem_size);
    copy.WidthInBytes = static_cast<size_t>(width_elems * elem_size);
    copy.Height = static_cast<size_t>(height);
    const CUresult rc =
        async ? driver->memcpy_2d_async(&copy, reinterpret_cast<CUstream>(stream)) : driver->memcpy_2d(&copy);
    return rc == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_MAPPING_ERROR;
}

cublasStatus_t vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y, int64_t incy, bool to_device,
                      cudaStream_t stream, bool async) {
    if (incx <= 0 || incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    return copy_2d(1, n, elem_size, x, incx, y, incy, to_device, stream, async);
}

cublasStatus_t matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* a, int64_t lda, void* b, int64_t ldb,
                      bool to_device, cudaStream_t stream, bool async) {
    if (rows < 0 || cols < 0 || lda < 1 || ldb < 1) return CUBLAS_STATUS_INVALID_VALUE;
    return copy_2d(rows, cols, elem_size, a, lda, b, ldb, to_device, stream, async);
}

struct Logger {
    std::mutex mutex;
    cublasLogCallback callback = nullptr;
    int on = 0, to_stdout = 0, to_stderr = 0;
    FILE* file = nullptr;
};

Logger& logger() {
    static Logger* instance = new Logger;  // never destroyed: callable from other libraries' destructors
    return *instance;
}

}  // namespace

#define TBDSIM_COPY_FORMS(I, suffix)                                                                                   \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetVector##suffix(I n, I elemSize, const void* x, I incx,                \
                                                                void* devicePtr, I incy) {                             \
        return vector(n, elemSize, x, incx, devicePtr, incy, true, nullptr, false);                                    \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetVector##suffix(I n, I elemSize, const void* x, I incx, void* y,       \
                                                                I incy) {                                              \
        return vector(n, elemSize, x, incx, y, incy, false, nullptr, false);                                           \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetMatrix##suffix(I rows, I cols, I elemSize, const void* A, I lda,      \
                                                                void* B, I ldb) {                                      \
        return matrix(rows, cols, elemSize, A, lda, B, ldb, true, nullptr, false);                                     \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetMatrix##suffix(I rows, I cols, I elemSize, const void* A, I lda,      \
                                                                void* B, I ldb) {                                      \
        return matrix(rows, cols, elemSize, A, lda, B, ldb, false, nullptr, false);                                    \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetVectorAsync##suffix(I n, I elemSize, const void* hostPtr, I incx,     \
                                                                     void* devicePtr, I incy, cudaStream_t stream) {   \
        return vector(n, elemSize, hostPtr, incx, devicePtr, incy, true, stream, true);                                \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetVectorAsync##suffix(I n, I elemSize, const void* devicePtr, I incx,   \
                                                                     void* hostPtr, I incy, cudaStream_t stream) {     \
        return vector(n, elemSize, devicePtr, incx, hostPtr, incy, false, stream, true);                               \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetMatrixAsync##suffix(I rows, I cols, I elemSize, const void* A, I lda, \
                                                                     void* B, I ldb, cudaStream_t stream) {            \
        return matrix(rows, cols, elemSize, A, lda, B, ldb, true, stream, true);                                       \
    }                                                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetMatrixAsync##suffix(I rows, I cols, I elemSize, const void* A, I lda, \
                                                                     void* B, I ldb, cudaStream_t stream) {            \
        return matrix(rows, cols, elemSize, A, lda, B, ldb, false, stream, true);                                      \
    }
TBDSIM_COPY_FORMS(int, )
TBDSIM_COPY_FORMS(int64_t, _64)

// ---- logger ----

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasLoggerConfigure(int logIsOn, int logToStdOut, int logToStdErr,
                                                          const char* logFileName) {
    Logger& log = logger();
    std::lock_guard<std::mutex> lock(log.mutex);
    log.on = logIsOn, log.to_stdout = logToStdOut, log.to_stderr = logToStdErr;
    if (log.file != nullptr) std::fclose(log.file), log.file = nullptr;
    if (logFileName != nullptr && *logFileName != '\0') {
        log.file = std::fopen(logFileName, "a");
        if (log.file == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetLoggerCallback(cublasLogCallback userCallback) {
    Logger& log = logger();
    std::lock_guard<std::mutex> lock(log.mutex);
    log.callback = userCallback;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetLoggerCallback(cublasLogCallback* userCallback) {
    if (userCallback == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    Logger& log = logger();
    std::lock_guard<std::mutex> lock(log.mutex);
    *userCallback = log.callback;
    return CUBLAS_STATUS_SUCCESS;
}

// The reference BLAS's error reporter, as cuBLAS documents it: one line naming the routine and the
// parameter.
TBDSIM_CUBLAS_EXPORT void cublasXerbla(const char* srName, int info) {
    std::fprintf(stderr, " ** On entry to %s parameter number %d had an illegal value\n",
                 srName != nullptr ? srName : "?", info);
}

// ---- settings stored in the handle ----

#define TBDSIM_HANDLE_SETTING(get_name, set_name, T, field)                         \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t get_name(cublasHandle_t handle, T* value) { \
        if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                \
        if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                   \
        *value = handle->field;                                                     \
        return CUBLAS_STATUS_SUCCESS;                                               \
    }                                                                               \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t set_name(cublasHandle_t handle, T value) {  \
        if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                \
        handle->field = value;                                                      \
        return CUBLAS_STATUS_SUCCESS;                                               \
    }
TBDSIM_HANDLE_SETTING(cublasGetEmulationStrategy, cublasSetEmulationStrategy, cublasEmulationStrategy_t,
                      emulation_strategy)
TBDSIM_HANDLE_SETTING(cublasGetEmulationSpecialValuesSupport, cublasSetEmulationSpecialValuesSupport,
                      cudaEmulationSpecialValuesSupport, emulation_special_values)
TBDSIM_HANDLE_SETTING(cublasGetFixedPointEmulationMantissaControl, cublasSetFixedPointEmulationMantissaControl,
                      cudaEmulationMantissaControl, mantissa_control)
TBDSIM_HANDLE_SETTING(cublasGetFixedPointEmulationMaxMantissaBitCount, cublasSetFixedPointEmulationMaxMantissaBitCount,
                      int, max_mantissa_bit_count)
TBDSIM_HANDLE_SETTING(cublasGetFixedPointEmulationMantissaBitOffset, cublasSetFixedPointEmulationMantissaBitOffset, int,
                      mantissa_bit_offset)
TBDSIM_HANDLE_SETTING(cublasGetFixedPointEmulationMantissaBitCountPointer,
                      cublasSetFixedPointEmulationMantissaBitCountPointer, int*, mantissa_bit_count_pointer)

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int* smCountTarget) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (smCountTarget == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *smCountTarget = handle->sm_count_target;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int smCountTarget) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (smCountTarget < 0) return CUBLAS_STATUS_INVALID_VALUE;
    handle->sm_count_target = smCountTarget;
    return CUBLAS_STATUS_SUCCESS;
}
