// The real-typed GEMM entry points gemm_api.cpp does not define: cublasSgemmEx, the pointer-array
// batched D and H GEMMs, and the grouped batched GEMMs (S, D, Ex), each group one batched launch of
// the GEMM catalog (gemm_launch.cpp), as real cuBLAS runs a group per kernel.
#include <cublas_api.h>

#include <cstddef>
#include <cstdint>

#include "gemm_launch.h"
#include "handle.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cublas::BatchLayout;
using tbdsim::cublas::GemmRequest;
using tbdsim::cublas::ScalarType;

namespace {

GemmRequest describe(cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                     const void* alpha, const void* a, int64_t lda, const void* b, int64_t ldb, const void* beta,
                     void* c, int64_t ldc) {
    GemmRequest r;
    r.transa = transa, r.transb = transb, r.m = m, r.n = n, r.k = k, r.alpha = alpha, r.beta = beta;
    r.a = a, r.lda = lda, r.b = b, r.ldb = ldb, r.c = c, r.ldc = ldc;
    return r;
}

GemmRequest batched(GemmRequest r, int64_t batch) {
    r.layout = BatchLayout::PointerArray;
    r.batch_count = batch;
    return r;
}

cublasStatus_t fixed(cublasHandle_t handle, GemmRequest r, TbdsimPrecision precision, ScalarType scalar) {
    r.precision = precision;
    r.scalar_type = scalar;
    return tbdsim::cublas::run_gemm(handle, r);
}

// cublasSgemmEx: FP32 scalars and compute (under the handle's math mode), the data types given.
cublasStatus_t sgemm_ex(cublasHandle_t handle, GemmRequest r, cudaDataType a_type, cudaDataType b_type,
                        cudaDataType c_type) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    ScalarType scalar = ScalarType::Float;
    if (const cublasStatus_t status =
            tbdsim::cublas::classify_gemm_ex(handle, a_type, b_type, c_type, CUBLAS_COMPUTE_32F, &r.precision, &scalar);
        status != CUBLAS_STATUS_SUCCESS)
        return status;
    r.scalar_type = ScalarType::Float;
    return tbdsim::cublas::run_gemm(handle, r);
}

std::size_t scalar_bytes(ScalarType type) {
    switch (type) {
        case ScalarType::Half:
            return 2;
        case ScalarType::Double:
            return 8;
        default:
            return 4;
    }
}

// The arrays of one grouped call; Index is int (32-bit form) or int64_t (_64 form).
template <typename Index>
struct Groups {
    const cublasOperation_t* transa;
    const cublasOperation_t* transb;
    const Index *m, *n, *k, *lda, *ldb, *ldc, *size;
    const void* alpha;  // group_count scalars
    const void* beta;
    const void* const* a;  // sum(size) pointers
    const void* const* b;
    void* const* c;
    int64_t count;
};

template <typename Index>
cublasStatus_t grouped(cublasHandle_t handle, const Groups<Index>& g, TbdsimPrecision precision, ScalarType scalar) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (g.count < 0) return CUBLAS_STATUS_INVALID_VALUE;
    const auto* alpha = static_cast<const char*>(g.alpha);
    const auto* beta = static_cast<const char*>(g.beta);
    int64_t first = 0;  // index of the group's first problem in the pointer arrays
    for (int64_t i = 0; i < g.count; ++i) {
        if (g.size[i] < 0) return CUBLAS_STATUS_INVALID_VALUE;
        GemmRequest r = batched(describe(g.transa[i], g.transb[i], g.m[i], g.n[i], g.k[i],
                                         alpha + i * scalar_bytes(scalar), g.a + first, g.lda[i], g.b + first, g.ldb[i],
                                         beta + i * scalar_bytes(scalar), const_cast<void**>(g.c + first), g.ldc[i]),
                                g.size[i]);
        if (const cublasStatus_t status = fixed(handle, r, precision, scalar); status != CUBLAS_STATUS_SUCCESS)
            return status;
        first += g.size[i];
    }
    return CUBLAS_STATUS_SUCCESS;
}

template <typename Index>
cublasStatus_t grouped_ex(cublasHandle_t handle, const Groups<Index>& g, cudaDataType a_type, cudaDataType b_type,
                          cudaDataType c_type, cublasComputeType_t compute_type) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    TbdsimPrecision precision = TBDSIM_PRECISION_FP32;
    ScalarType scalar = ScalarType::Float;
    if (const cublasStatus_t status =
            tbdsim::cublas::classify_gemm_ex(handle, a_type, b_type, c_type, compute_type, &precision, &scalar);
        status != CUBLAS_STATUS_SUCCESS)
        return status;
    return grouped(handle, g, precision, scalar);
}

}  // namespace

// The two forms of each entry point differ only in their integer width.
#define TBDSIM_TWO_FORMS(macro) macro(int, ) macro(int64_t, _64)

#define TBDSIM_SGEMM_EX(I, suffix)                                                                                    \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasSgemmEx##suffix(                                                        \
        cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k, const float* alpha, \
        const void* A, cudaDataType Atype, I lda, const void* B, cudaDataType Btype, I ldb, const float* beta,        \
        void* C, cudaDataType Ctype, I ldc) {                                                                         \
        return sgemm_ex(handle, describe(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), Atype, Btype, \
                        Ctype);                                                                                       \
    }
TBDSIM_TWO_FORMS(TBDSIM_SGEMM_EX)

#define TBDSIM_BATCHED(name, T, precision, scalar)                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t transa,                       \
                                             cublasOperation_t transb, int m, int n, int k, const T* alpha,         \
                                             const T* const Aarray[], int lda, const T* const Barray[], int ldb,    \
                                             const T* beta, T* const Carray[], int ldc, int batchCount) {           \
        return fixed(handle,                                                                                        \
                     batched(describe(transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,               \
                                      const_cast<T**>(Carray), ldc),                                                \
                             batchCount),                                                                           \
                     precision, scalar);                                                                            \
    }                                                                                                               \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_64(                                                                  \
        cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, \
        const T* alpha, const T* const Aarray[], int64_t lda, const T* const Barray[], int64_t ldb, const T* beta,  \
        T* const Carray[], int64_t ldc, int64_t batchCount) {                                                       \
        return fixed(handle,                                                                                        \
                     batched(describe(transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,               \
                                      const_cast<T**>(Carray), ldc),                                                \
                             batchCount),                                                                           \
                     precision, scalar);                                                                            \
    }
TBDSIM_BATCHED(cublasDgemmBatched, double, TBDSIM_PRECISION_FP64, ScalarType::Double)
TBDSIM_BATCHED(cublasHgemmBatched, __half, TBDSIM_PRECISION_FP16, ScalarType::Half)

#define TBDSIM_GROUPED(name, T, precision_expr, scalar, I, suffix)                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##suffix(                                                               \
        cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],      \
        const I m_array[], const I n_array[], const I k_array[], const T alpha_array[], const T* const Aarray[],    \
        const I lda_array[], const T* const Barray[], const I ldb_array[], const T beta_array[], T* const Carray[], \
        const I ldc_array[], I group_count, const I group_size[]) {                                                 \
        const Groups<I> g{transa_array,                                                                             \
                          transb_array,                                                                             \
                          m_array,                                                                                  \
                          n_array,                                                                                  \
                          k_array,                                                                                  \
                          lda_array,                                                                                \
                          ldb_array,                                                                                \
                          ldc_array,                                                                                \
                          group_size,                                                                               \
                          alpha_array,                                                                              \
                          beta_array,                                                                               \
                          reinterpret_cast<const void* const*>(Aarray),                                             \
                          reinterpret_cast<const void* const*>(Barray),                                             \
                          reinterpret_cast<void* const*>(Carray),                                                   \
                          group_count};                                                                             \
        if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                \
        return grouped(handle, g, precision_expr, scalar);                                                          \
    }
#define TBDSIM_SGROUPED(I, suffix)                                                                   \
    TBDSIM_GROUPED(cublasSgemmGroupedBatched, float, tbdsim::cublas::single_precision_under(handle), \
                   ScalarType::Float, I, suffix)
#define TBDSIM_DGROUPED(I, suffix) \
    TBDSIM_GROUPED(cublasDgemmGroupedBatched, double, TBDSIM_PRECISION_FP64, ScalarType::Double, I, suffix)
TBDSIM_TWO_FORMS(TBDSIM_SGROUPED)
TBDSIM_TWO_FORMS(TBDSIM_DGROUPED)

#define TBDSIM_GROUPED_EX(I, suffix)                                                                                  \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t cublasGemmGroupedBatchedEx##suffix(                                           \
        cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],        \
        const I m_array[], const I n_array[], const I k_array[], const void* alpha_array, const void* const Aarray[], \
        cudaDataType_t Atype, const I lda_array[], const void* const Barray[], cudaDataType_t Btype,                  \
        const I ldb_array[], const void* beta_array, void* const Carray[], cudaDataType_t Ctype, const I ldc_array[], \
        I group_count, const I group_size[], cublasComputeType_t computeType) {                                       \
        const Groups<I> g{transa_array, transb_array, m_array,    n_array, k_array, lda_array, ldb_array,  ldc_array, \
                          group_size,   alpha_array,  beta_array, Aarray,  Barray,  Carray,    group_count};          \
        return grouped_ex(handle, g, Atype, Btype, Ctype, computeType);                                               \
    }
TBDSIM_TWO_FORMS(TBDSIM_GROUPED_EX)
