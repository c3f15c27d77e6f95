// The exported level-1 and level-2 entry points (S/D/C/Z, _v2 and _v2_64). Each one only describes
// its call as a VectorRequest; vector_launch.cpp does the rest.
#include <cublas_api.h>

#include "vector_launch.h"

#define TBDSIM_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

using tbdsim::cublas::DataType;
using tbdsim::cublas::run_vector;
using tbdsim::cublas::VectorOp;
using tbdsim::cublas::VectorRequest;

namespace {

VectorRequest request(VectorOp op, DataType type) {
    VectorRequest r;
    r.op = op;
    r.type = type;
    return r;
}

cublasStatus_t dot(cublasHandle_t h, DataType t, bool conj, int64_t n, const void* x, int64_t incx, const void* y,
                   int64_t incy, void* result) {
    VectorRequest r = request(VectorOp::Dot, t);
    r.conjugate = conj;
    r.n = n, r.x = x, r.incx = incx, r.y = y, r.incy = incy, r.result = result;
    return run_vector(h, r);
}

cublasStatus_t axpy(cublasHandle_t h, DataType t, int64_t n, const void* alpha, const void* x, int64_t incx,
                    void* y, int64_t incy) {
    VectorRequest r = request(VectorOp::Axpy, t);
    r.n = n, r.alpha = alpha, r.x = x, r.incx = incx, r.y = y, r.incy = incy;
    return run_vector(h, r);
}

cublasStatus_t scal(cublasHandle_t h, DataType t, bool real_alpha, int64_t n, const void* alpha, void* x,
                    int64_t incx) {
    VectorRequest r = request(VectorOp::Scal, t);
    r.real_scalar = real_alpha;
    r.n = n, r.alpha = alpha, r.y = x, r.x = x, r.incx = incx;
    return run_vector(h, r);
}

cublasStatus_t reduce(cublasHandle_t h, VectorOp op, DataType t, int64_t n, const void* x, int64_t incx,
                      void* result) {
    VectorRequest r = request(op, t);
    r.n = n, r.x = x, r.incx = incx, r.result = result;
    return run_vector(h, r);
}

cublasStatus_t copy(cublasHandle_t h, DataType t, int64_t n, const void* x, int64_t incx, void* y, int64_t incy) {
    VectorRequest r = request(VectorOp::Copy, t);
    r.n = n, r.x = x, r.incx = incx, r.y = y, r.incy = incy;
    return run_vector(h, r);
}

cublasStatus_t gemv(cublasHandle_t h, DataType t, cublasOperation_t trans, int64_t m, int64_t n, const void* alpha,
                    const void* a, int64_t lda, const void* x, int64_t incx, const void* beta, void* y,
                    int64_t incy) {
    VectorRequest r = request(VectorOp::Gemv, t);
    r.trans = trans;
    r.m = m, r.n = n, r.alpha = alpha, r.a = a, r.lda = lda, r.x = x, r.incx = incx, r.beta = beta, r.y = y,
    r.incy = incy;
    return run_vector(h, r);
}

cublasStatus_t ger(cublasHandle_t h, DataType t, bool conj, int64_t m, int64_t n, const void* alpha, const void* x,
                   int64_t incx, const void* y, int64_t incy, void* a, int64_t lda) {
    VectorRequest r = request(VectorOp::Ger, t);
    r.conjugate = conj;
    r.m = m, r.n = n, r.alpha = alpha, r.x = x, r.incx = incx, r.y = y, r.incy = incy, r.a = a, r.lda = lda;
    return run_vector(h, r);
}

}  // namespace

// Each macro defines the 32-bit (_v2) and 64-bit (_v2_64) forms of one entry point.

#define TBDSIM_DOT(name, T, R, type, conj)                                                                 \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, int n, const T* x, int incx, const T* y, \
                                                  int incy, R* result) {                                  \
        return dot(h, type, conj, n, x, incx, y, incy, result);                                           \
    }                                                                                                      \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, int64_t n, const T* x, int64_t incx, \
                                                     const T* y, int64_t incy, R* result) {                \
        return dot(h, type, conj, n, x, incx, y, incy, result);                                           \
    }
TBDSIM_DOT(cublasSdot, float, float, DataType::S, false)
TBDSIM_DOT(cublasDdot, double, double, DataType::D, false)
TBDSIM_DOT(cublasCdotu, cuComplex, cuComplex, DataType::C, false)
TBDSIM_DOT(cublasCdotc, cuComplex, cuComplex, DataType::C, true)
TBDSIM_DOT(cublasZdotu, cuDoubleComplex, cuDoubleComplex, DataType::Z, false)
TBDSIM_DOT(cublasZdotc, cuDoubleComplex, cuDoubleComplex, DataType::Z, true)

#define TBDSIM_AXPY(name, T, type)                                                                           \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, int n, const T* alpha, const T* x, int incx, \
                                                  T* y, int incy) {                                          \
        return axpy(h, type, n, alpha, x, incx, y, incy);                                                    \
    }                                                                                                         \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, int64_t n, const T* alpha, const T* x,  \
                                                     int64_t incx, T* y, int64_t incy) {                      \
        return axpy(h, type, n, alpha, x, incx, y, incy);                                                    \
    }
TBDSIM_AXPY(cublasSaxpy, float, DataType::S)
TBDSIM_AXPY(cublasDaxpy, double, DataType::D)
TBDSIM_AXPY(cublasCaxpy, cuComplex, DataType::C)
TBDSIM_AXPY(cublasZaxpy, cuDoubleComplex, DataType::Z)

#define TBDSIM_SCAL(name, A, T, type, real_alpha)                                                            \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, int n, const A* alpha, T* x, int incx) {   \
        return scal(h, type, real_alpha, n, alpha, x, incx);                                                 \
    }                                                                                                         \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, int64_t n, const A* alpha, T* x,       \
                                                     int64_t incx) {                                          \
        return scal(h, type, real_alpha, n, alpha, x, incx);                                                 \
    }
TBDSIM_SCAL(cublasSscal, float, float, DataType::S, false)
TBDSIM_SCAL(cublasDscal, double, double, DataType::D, false)
TBDSIM_SCAL(cublasCscal, cuComplex, cuComplex, DataType::C, false)
TBDSIM_SCAL(cublasCsscal, float, cuComplex, DataType::C, true)
TBDSIM_SCAL(cublasZscal, cuDoubleComplex, cuDoubleComplex, DataType::Z, false)
TBDSIM_SCAL(cublasZdscal, double, cuDoubleComplex, DataType::Z, true)

#define TBDSIM_REDUCE(name, op, T, R, type)                                                                   \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, int n, const T* x, int incx, R* result) { \
        return reduce(h, op, type, n, x, incx, result);                                                      \
    }                                                                                                         \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, int64_t n, const T* x, int64_t incx,   \
                                                     R* result) {                                             \
        return reduce(h, op, type, n, x, incx, result);                                                      \
    }
TBDSIM_REDUCE(cublasSnrm2, VectorOp::Nrm2, float, float, DataType::S)
TBDSIM_REDUCE(cublasDnrm2, VectorOp::Nrm2, double, double, DataType::D)
TBDSIM_REDUCE(cublasScnrm2, VectorOp::Nrm2, cuComplex, float, DataType::C)
TBDSIM_REDUCE(cublasDznrm2, VectorOp::Nrm2, cuDoubleComplex, double, DataType::Z)
TBDSIM_REDUCE(cublasSasum, VectorOp::Asum, float, float, DataType::S)
TBDSIM_REDUCE(cublasDasum, VectorOp::Asum, double, double, DataType::D)
TBDSIM_REDUCE(cublasScasum, VectorOp::Asum, cuComplex, float, DataType::C)
TBDSIM_REDUCE(cublasDzasum, VectorOp::Asum, cuDoubleComplex, double, DataType::Z)

#define TBDSIM_COPY(name, T, type)                                                                             \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, int n, const T* x, int incx, T* y, int incy) { \
        return copy(h, type, n, x, incx, y, incy);                                                             \
    }                                                                                                           \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, int64_t n, const T* x, int64_t incx, T* y, \
                                                     int64_t incy) {                                            \
        return copy(h, type, n, x, incx, y, incy);                                                             \
    }
TBDSIM_COPY(cublasScopy, float, DataType::S)
TBDSIM_COPY(cublasDcopy, double, DataType::D)
TBDSIM_COPY(cublasCcopy, cuComplex, DataType::C)
TBDSIM_COPY(cublasZcopy, cuDoubleComplex, DataType::Z)

#define TBDSIM_GEMV(name, T, type)                                                                             \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, cublasOperation_t trans, int m, int n,     \
                                                  const T* alpha, const T* a, int lda, const T* x, int incx,   \
                                                  const T* beta, T* y, int incy) {                             \
        return gemv(h, type, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                             \
    }                                                                                                           \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, cublasOperation_t trans, int64_t m,     \
                                                     int64_t n, const T* alpha, const T* a, int64_t lda,        \
                                                     const T* x, int64_t incx, const T* beta, T* y,             \
                                                     int64_t incy) {                                            \
        return gemv(h, type, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);                             \
    }
TBDSIM_GEMV(cublasSgemv, float, DataType::S)
TBDSIM_GEMV(cublasDgemv, double, DataType::D)
TBDSIM_GEMV(cublasCgemv, cuComplex, DataType::C)
TBDSIM_GEMV(cublasZgemv, cuDoubleComplex, DataType::Z)

#define TBDSIM_GER(name, T, type, conj)                                                                        \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2(cublasHandle_t h, int m, int n, const T* alpha, const T* x,   \
                                                  int incx, const T* y, int incy, T* a, int lda) {             \
        return ger(h, type, conj, m, n, alpha, x, incx, y, incy, a, lda);                                      \
    }                                                                                                           \
    TBDSIM_CUBLAS_EXPORT cublasStatus_t name##_v2_64(cublasHandle_t h, int64_t m, int64_t n, const T* alpha,    \
                                                     const T* x, int64_t incx, const T* y, int64_t incy, T* a,  \
                                                     int64_t lda) {                                             \
        return ger(h, type, conj, m, n, alpha, x, incx, y, incy, a, lda);                                      \
    }
TBDSIM_GER(cublasSger, float, DataType::S, false)
TBDSIM_GER(cublasDger, double, DataType::D, false)
TBDSIM_GER(cublasCgeru, cuComplex, DataType::C, false)
TBDSIM_GER(cublasCgerc, cuComplex, DataType::C, true)
TBDSIM_GER(cublasZgeru, cuDoubleComplex, DataType::Z, false)
TBDSIM_GER(cublasZgerc, cuDoubleComplex, DataType::Z, true)
