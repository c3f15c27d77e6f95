// The modelled part of the simulated libcusparse.so.12: handles and streams, CSR sparse matrices
// and dense matrices/vectors (generic API descriptors), and FP32 SpMV and SpMM with non-transposed
// operands (the sparse-times-dense products training programs call, e.g. graph convolutions). The
// product is computed on the host into the (host-backed) device memory at the call; one kernel is
// launched on the handle's stream with 2 * nnz (* columns of B) FLOPs. Everything else — other
// formats, types, transposes, the legacy API — returns CUSPARSE_STATUS_NOT_SUPPORTED (the generated
// stubs), as does a call this file does not accept.
#include <cusparse.h>

#include <cstdint>
#include <new>

#include "aux_kernels.h"

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cusparseContext {
    cudaStream_t stream = nullptr;
};

struct cusparseSpMatDescr {
    int64_t rows = 0, cols = 0, nnz = 0;
    const int32_t* offsets = nullptr;
    const int32_t* columns = nullptr;
    const float* values = nullptr;
    int base = 0;
};

struct cusparseDnMatDescr {
    int64_t rows = 0, cols = 0, ld = 0;
    float* values = nullptr;
    cusparseOrder_t order = CUSPARSE_ORDER_COL;
    float& at(int64_t r, int64_t c) const {
        return order == CUSPARSE_ORDER_ROW ? values[r * ld + c] : values[c * ld + r];
    }
};

struct cusparseDnVecDescr {
    int64_t size = 0;
    float* values = nullptr;
};

namespace {

template <typename T, typename... Args>
cusparseStatus_t create(T** out, Args&&... args) {
    if (out == nullptr) return CUSPARSE_STATUS_INVALID_VALUE;
    *out = new (std::nothrow) T{args...};
    return *out != nullptr ? CUSPARSE_STATUS_SUCCESS : CUSPARSE_STATUS_ALLOC_FAILED;
}

cusparseStatus_t launch(cusparseHandle_t handle, tbdsim::aux::Kernel kernel, const void* in, void* out,
                        int64_t elements, double flops) {
    TbdsimAuxParams params{in, out, elements, 0, 0, 0};
    return tbdsim::aux::launch(kernel, reinterpret_cast<CUstream>(handle->stream), elements, params, flops) ==
                   CUDA_SUCCESS
               ? CUSPARSE_STATUS_SUCCESS
               : CUSPARSE_STATUS_EXECUTION_FAILED;
}

// A row of A: calls visit(column, value) for each stored entry.
template <typename Visit>
void for_row(const cusparseSpMatDescr& a, int64_t row, Visit&& visit) {
    for (int32_t j = a.offsets[row] - a.base; j < a.offsets[row + 1] - a.base; ++j) {
        visit(a.columns[j] - a.base, a.values[j]);
    }
}

}  // namespace

TBD_EXPORT cusparseStatus_t cusparseCreate(cusparseHandle_t* handle) {
    return create(handle);
}
TBD_EXPORT cusparseStatus_t cusparseDestroy(cusparseHandle_t handle) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUSPARSE_STATUS_SUCCESS;
}
TBD_EXPORT cusparseStatus_t cusparseSetStream(cusparseHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUSPARSE_STATUS_SUCCESS;
}
TBD_EXPORT cusparseStatus_t cusparseGetStream(cusparseHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (stream == nullptr) return CUSPARSE_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUSPARSE_STATUS_SUCCESS;
}
TBD_EXPORT cusparseStatus_t cusparseGetVersion(cusparseHandle_t handle, int* version) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (version == nullptr) return CUSPARSE_STATUS_INVALID_VALUE;
    *version = CUSPARSE_VERSION;
    return CUSPARSE_STATUS_SUCCESS;
}
TBD_EXPORT cusparseStatus_t cusparseGetProperty(libraryPropertyType type, int* value) {
    if (value == nullptr) return CUSPARSE_STATUS_INVALID_VALUE;
    switch (type) {
        case MAJOR_VERSION:
            *value = CUSPARSE_VER_MAJOR;
            return CUSPARSE_STATUS_SUCCESS;
        case MINOR_VERSION:
            *value = CUSPARSE_VER_MINOR;
            return CUSPARSE_STATUS_SUCCESS;
        case PATCH_LEVEL:
            *value = CUSPARSE_VER_PATCH;
            return CUSPARSE_STATUS_SUCCESS;
        default:
            return CUSPARSE_STATUS_INVALID_VALUE;
    }
}
TBD_EXPORT const char* cusparseGetErrorName(cusparseStatus_t status) {
    switch (status) {
        case CUSPARSE_STATUS_SUCCESS:
            return "CUSPARSE_STATUS_SUCCESS";
        case CUSPARSE_STATUS_NOT_INITIALIZED:
            return "CUSPARSE_STATUS_NOT_INITIALIZED";
        case CUSPARSE_STATUS_ALLOC_FAILED:
            return "CUSPARSE_STATUS_ALLOC_FAILED";
        case CUSPARSE_STATUS_INVALID_VALUE:
            return "CUSPARSE_STATUS_INVALID_VALUE";
        case CUSPARSE_STATUS_EXECUTION_FAILED:
            return "CUSPARSE_STATUS_EXECUTION_FAILED";
        case CUSPARSE_STATUS_NOT_SUPPORTED:
            return "CUSPARSE_STATUS_NOT_SUPPORTED";
        default:
            return "CUSPARSE_STATUS_UNKNOWN";
    }
}
TBD_EXPORT const char* cusparseGetErrorString(cusparseStatus_t status) {
    return status == CUSPARSE_STATUS_NOT_SUPPORTED ? "operation not supported (by the simulated GPU)"
                                                   : cusparseGetErrorName(status);
}

TBD_EXPORT cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t* descriptor, int64_t rows, int64_t cols, int64_t nnz,
                                              void* offsets, void* columns, void* values,
                                              cusparseIndexType_t offsets_type, cusparseIndexType_t columns_type,
                                              cusparseIndexBase_t base, cudaDataType value_type) {
    if (rows < 0 || cols < 0 || nnz < 0 ||
        (nnz > 0 && (offsets == nullptr || columns == nullptr || values == nullptr))) {
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    if (offsets_type != CUSPARSE_INDEX_32I || columns_type != CUSPARSE_INDEX_32I || value_type != CUDA_R_32F) {
        return CUSPARSE_STATUS_NOT_SUPPORTED;
    }
    return create(descriptor, rows, cols, nnz, static_cast<const int32_t*>(offsets),
                  static_cast<const int32_t*>(columns), static_cast<const float*>(values),
                  base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0);
}
TBD_EXPORT cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t descriptor) {
    delete descriptor;
    return CUSPARSE_STATUS_SUCCESS;
}
TBD_EXPORT cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t* descriptor, int64_t rows, int64_t cols,
                                                int64_t ld, void* values, cudaDataType type, cusparseOrder_t order) {
    if (rows < 0 || cols < 0 || ld < (order == CUSPARSE_ORDER_ROW ? cols : rows)) return CUSPARSE_STATUS_INVALID_VALUE;
    if (type != CUDA_R_32F) return CUSPARSE_STATUS_NOT_SUPPORTED;
    return create(descriptor, rows, cols, ld, static_cast<float*>(values), order);
}
TBD_EXPORT cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t descriptor) {
    delete descriptor;
    return CUSPARSE_STATUS_SUCCESS;
}
TBD_EXPORT cusparseStatus_t cusparseCreateDnVec(cusparseDnVecDescr_t* descriptor, int64_t size, void* values,
                                                cudaDataType type) {
    if (size < 0) return CUSPARSE_STATUS_INVALID_VALUE;
    if (type != CUDA_R_32F) return CUSPARSE_STATUS_NOT_SUPPORTED;
    return create(descriptor, size, static_cast<float*>(values));
}
TBD_EXPORT cusparseStatus_t cusparseDestroyDnVec(cusparseConstDnVecDescr_t descriptor) {
    delete descriptor;
    return CUSPARSE_STATUS_SUCCESS;
}

TBD_EXPORT cusparseStatus_t cusparseSpMV_bufferSize(cusparseHandle_t handle, cusparseOperation_t, const void*,
                                                    cusparseConstSpMatDescr_t, cusparseConstDnVecDescr_t, const void*,
                                                    cusparseDnVecDescr_t, cudaDataType, cusparseSpMVAlg_t,
                                                    size_t* size) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (size == nullptr) return CUSPARSE_STATUS_INVALID_VALUE;
    *size = 0;
    return CUSPARSE_STATUS_SUCCESS;
}

TBD_EXPORT cusparseStatus_t cusparseSpMV(cusparseHandle_t handle, cusparseOperation_t op, const void* alpha,
                                         cusparseConstSpMatDescr_t a, cusparseConstDnVecDescr_t x, const void* beta,
                                         cusparseDnVecDescr_t y, cudaDataType compute, cusparseSpMVAlg_t, void*) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (a == nullptr || x == nullptr || y == nullptr || alpha == nullptr || beta == nullptr) {
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    if (op != CUSPARSE_OPERATION_NON_TRANSPOSE || compute != CUDA_R_32F) return CUSPARSE_STATUS_NOT_SUPPORTED;
    if (x->size != a->cols || y->size != a->rows) return CUSPARSE_STATUS_INVALID_VALUE;
    const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
    for (int64_t r = 0; r < a->rows; ++r) {
        float sum = 0;
        for_row(*a, r, [&](int64_t c, float v) { sum += v * x->values[c]; });
        y->values[r] = al * sum + (be == 0 ? 0.0f : be * y->values[r]);
    }
    return launch(handle, tbdsim::aux::kSpmvCsr, a->values, y->values, a->nnz, 2.0 * static_cast<double>(a->nnz));
}

TBD_EXPORT cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t handle, cusparseOperation_t, cusparseOperation_t,
                                                    const void*, cusparseConstSpMatDescr_t, cusparseConstDnMatDescr_t,
                                                    const void*, cusparseDnMatDescr_t, cudaDataType, cusparseSpMMAlg_t,
                                                    size_t* size) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (size == nullptr) return CUSPARSE_STATUS_INVALID_VALUE;
    *size = 0;
    return CUSPARSE_STATUS_SUCCESS;
}

TBD_EXPORT cusparseStatus_t cusparseSpMM(cusparseHandle_t handle, cusparseOperation_t op_a, cusparseOperation_t op_b,
                                         const void* alpha, cusparseConstSpMatDescr_t a, cusparseConstDnMatDescr_t b,
                                         const void* beta, cusparseDnMatDescr_t c, cudaDataType compute,
                                         cusparseSpMMAlg_t, void*) {
    if (handle == nullptr) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (a == nullptr || b == nullptr || c == nullptr || alpha == nullptr || beta == nullptr) {
        return CUSPARSE_STATUS_INVALID_VALUE;
    }
    if (op_a != CUSPARSE_OPERATION_NON_TRANSPOSE || op_b != CUSPARSE_OPERATION_NON_TRANSPOSE || compute != CUDA_R_32F) {
        return CUSPARSE_STATUS_NOT_SUPPORTED;
    }
    if (b->rows != a->cols || c->rows != a->rows || c->cols != b->cols) return CUSPARSE_STATUS_INVALID_VALUE;
    const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
    for (int64_t r = 0; r < a->rows; ++r) {
        for (int64_t col = 0; col < b->cols; ++col) {
            float sum = 0;
            for_row(*a, r, [&](int64_t k, float v) { sum += v * b->at(k, col); });
            c->at(r, col) = al * sum + (be == 0 ? 0.0f : be * c->at(r, col));
        }
    }
    return launch(handle, tbdsim::aux::kSpmmCsr, a->values, c->values, a->rows * b->cols,
                  2.0 * static_cast<double>(a->nnz) * static_cast<double>(b->cols));
}
