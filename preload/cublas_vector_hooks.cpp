// cuBLAS level-1 and level-2 calls (dot, axpy, scal, nrm2, asum, copy, gemv, ger in S/D/C/Z, _v2 and
// _v2_64) as library calls, like the GEMMs in cublas_hooks.cpp: operand roles (a and b read, c
// written), sizes, element types and FLOPs, and the launches made inside the call.
//   dot:  a = x, b = y, c = result      axpy: a = x, c = y        scal: a = c = x
//   nrm2, asum: a = x, c = result       copy: a = x, c = y        gemv: a = A, b = x, c = y
//   ger:  a = x, b = y, c = A
// Sizes: n is the vector length (m = 1) for level 1; m and n the matrix's for level 2.
#include <cublas_api.h>  // not cublas_v2.h: its macros would rename the base names below
#include <dlfcn.h>

#include <cstring>

#include "cublas_common.h"
#include "hook_registry.h"
#include "library_call.h"

namespace tbdprof::preload {
namespace {

using Type = BlasType;

struct VectorShape : BlasCall {
    bool real_alpha = false;  // Csscal/Zdscal
};

// The same counts as the simulated cuBLAS annotates (docs/collector.md): 2n for dot and axpy, n for
// scal and asum, 2n for nrm2, 0 for copy, 2mn for gemv and ger; complex multiply-adds count 4.
double flops_of(const VectorShape& s) {
    const double n = static_cast<double>(s.n > 0 ? s.n : 0);
    const double mn = static_cast<double>(s.m > 0 ? s.m : 0) * n;
    const double madd = is_complex(s.type) ? 4.0 : 1.0;
    switch (s.op) {
    case raw::LibraryOp::Dot: case raw::LibraryOp::Axpy: return 2.0 * n * madd;
    case raw::LibraryOp::Scal: return n * (is_complex(s.type) ? (s.real_alpha ? 2.0 : 6.0) : 1.0);
    case raw::LibraryOp::Nrm2: return 2.0 * n * (is_complex(s.type) ? 2.0 : 1.0);
    case raw::LibraryOp::Asum: return n * (is_complex(s.type) ? 2.0 : 1.0);
    case raw::LibraryOp::Gemv: case raw::LibraryOp::Ger: return 2.0 * mn * madd;
    default: return 0.0;
    }
}

template <typename Call>
cublasStatus_t record_vector(const VectorShape& s, Call&& call) {
    return record_library_call(call, [&](ThreadState& thread, raw::RawLibraryCall& record) {
        record_blas_call(thread, record, s);
        record.flops = flops_of(s);
    });
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;

// After the name: op, type, handle, m, n, k (0), batch (1), a, b, c (BlasCall), and real_alpha.
#define TBD_VECTOR_HOOK(...) TBD_CUBLAS_HOOK(VectorShape, record_vector, __VA_ARGS__)

#define TBD_DOT(I, SUFFIX, base, T, R, type)                                                                  \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* x, I incx, const T* y, I incy, R* result), \
                    (h, n, x, incx, y, incy, result), LibraryOp::Dot, type, h, 1, n, 0, 1, x, y, result)
TBD_CUBLAS_V2(TBD_DOT, cublasSdot, float, float, Type::S)
TBD_CUBLAS_V2(TBD_DOT, cublasDdot, double, double, Type::D)
TBD_CUBLAS_V2(TBD_DOT, cublasCdotu, cuComplex, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_DOT, cublasCdotc, cuComplex, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_DOT, cublasZdotu, cuDoubleComplex, cuDoubleComplex, Type::Z)
TBD_CUBLAS_V2(TBD_DOT, cublasZdotc, cuDoubleComplex, cuDoubleComplex, Type::Z)

#define TBD_AXPY(I, SUFFIX, base, T, type)                                                                   \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* alpha, const T* x, I incx, T* y, I incy), \
                    (h, n, alpha, x, incx, y, incy), LibraryOp::Axpy, type, h, 1, n, 0, 1, x, nullptr, y)
TBD_CUBLAS_V2(TBD_AXPY, cublasSaxpy, float, Type::S)
TBD_CUBLAS_V2(TBD_AXPY, cublasDaxpy, double, Type::D)
TBD_CUBLAS_V2(TBD_AXPY, cublasCaxpy, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_AXPY, cublasZaxpy, cuDoubleComplex, Type::Z)

#define TBD_SCAL(I, SUFFIX, base, A, T, type, real_alpha)                                                        \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const A* alpha, T* x, I incx), (h, n, alpha, x, incx), \
                    LibraryOp::Scal, type, h, 1, n, 0, 1, x, nullptr, x, real_alpha)
TBD_CUBLAS_V2(TBD_SCAL, cublasSscal, float, float, Type::S, false)
TBD_CUBLAS_V2(TBD_SCAL, cublasDscal, double, double, Type::D, false)
TBD_CUBLAS_V2(TBD_SCAL, cublasCscal, cuComplex, cuComplex, Type::C, false)
TBD_CUBLAS_V2(TBD_SCAL, cublasCsscal, float, cuComplex, Type::C, true)
TBD_CUBLAS_V2(TBD_SCAL, cublasZscal, cuDoubleComplex, cuDoubleComplex, Type::Z, false)
TBD_CUBLAS_V2(TBD_SCAL, cublasZdscal, double, cuDoubleComplex, Type::Z, true)

#define TBD_REDUCE(I, SUFFIX, base, op, T, R, type)                                                                    \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* x, I incx, R* result), (h, n, x, incx, result), op, \
                    type, h, 1, n, 0, 1, x, nullptr, result)
TBD_CUBLAS_V2(TBD_REDUCE, cublasSnrm2, LibraryOp::Nrm2, float, float, Type::S)
TBD_CUBLAS_V2(TBD_REDUCE, cublasDnrm2, LibraryOp::Nrm2, double, double, Type::D)
TBD_CUBLAS_V2(TBD_REDUCE, cublasScnrm2, LibraryOp::Nrm2, cuComplex, float, Type::C)
TBD_CUBLAS_V2(TBD_REDUCE, cublasDznrm2, LibraryOp::Nrm2, cuDoubleComplex, double, Type::Z)
TBD_CUBLAS_V2(TBD_REDUCE, cublasSasum, LibraryOp::Asum, float, float, Type::S)
TBD_CUBLAS_V2(TBD_REDUCE, cublasDasum, LibraryOp::Asum, double, double, Type::D)
TBD_CUBLAS_V2(TBD_REDUCE, cublasScasum, LibraryOp::Asum, cuComplex, float, Type::C)
TBD_CUBLAS_V2(TBD_REDUCE, cublasDzasum, LibraryOp::Asum, cuDoubleComplex, double, Type::Z)

#define TBD_COPY(I, SUFFIX, base, T, type)                                                                             \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* x, I incx, T* y, I incy), (h, n, x, incx, y, incy), \
                    LibraryOp::Copy, type, h, 1, n, 0, 1, x, nullptr, y)
TBD_CUBLAS_V2(TBD_COPY, cublasScopy, float, Type::S)
TBD_CUBLAS_V2(TBD_COPY, cublasDcopy, double, Type::D)
TBD_CUBLAS_V2(TBD_COPY, cublasCcopy, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_COPY, cublasZcopy, cuDoubleComplex, Type::Z)

#define TBD_GEMV(I, SUFFIX, base, T, type)                                                                            \
    TBD_VECTOR_HOOK(base##SUFFIX,                                                                                     \
                    (cublasHandle_t h, cublasOperation_t trans, I m, I n, const T* alpha, const T* a, I lda,          \
                     const T* x, I incx, const T* beta, T* y, I incy),                                                \
                    (h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), LibraryOp::Gemv, type, h, m, n, 0, 1, a, \
                    x, y)
TBD_CUBLAS_V2(TBD_GEMV, cublasSgemv, float, Type::S)
TBD_CUBLAS_V2(TBD_GEMV, cublasDgemv, double, Type::D)
TBD_CUBLAS_V2(TBD_GEMV, cublasCgemv, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_GEMV, cublasZgemv, cuDoubleComplex, Type::Z)

#define TBD_GER(I, SUFFIX, base, T, type)                                                                              \
    TBD_VECTOR_HOOK(base##SUFFIX,                                                                                      \
                    (cublasHandle_t h, I m, I n, const T* alpha, const T* x, I incx, const T* y, I incy, T* a, I lda), \
                    (h, m, n, alpha, x, incx, y, incy, a, lda), LibraryOp::Ger, type, h, m, n, 0, 1, x, y, a)
TBD_CUBLAS_V2(TBD_GER, cublasSger, float, Type::S)
TBD_CUBLAS_V2(TBD_GER, cublasDger, double, Type::D)
TBD_CUBLAS_V2(TBD_GER, cublasCgeru, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_GER, cublasCgerc, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_GER, cublasZgeru, cuDoubleComplex, Type::Z)
TBD_CUBLAS_V2(TBD_GER, cublasZgerc, cuDoubleComplex, Type::Z)

namespace tbdprof::preload {

// A program that dlopens cuBLAS and looks these up gets our wrappers (library_call.h).
void* substitute_cublas_vector_symbol(const char* name, void* result) {
    if (std::strncmp(name, "cublas", 6) != 0) return nullptr;
    remember_cublas_handle_query(name, result);
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSdot, cublasDdot, cublasCdotu, cublasZdotu)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSaxpy, cublasDaxpy, cublasCaxpy, cublasZaxpy)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSscal, cublasDscal, cublasCscal, cublasZscal)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSnrm2, cublasDnrm2, cublasScnrm2, cublasDznrm2)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSasum, cublasDasum, cublasScasum, cublasDzasum)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasScopy, cublasDcopy, cublasCcopy, cublasZcopy)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSgemv, cublasDgemv, cublasCgemv, cublasZgemv)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSger, cublasDger, cublasCgeru, cublasZgeru)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasCdotc, cublasZdotc, cublasCsscal, cublasZdscal)
    TBD_CUBLAS_SUBSTITUTE_V2(cublasCgerc)
    TBD_CUBLAS_SUBSTITUTE_V2(cublasZgerc)
    return nullptr;
}

}  // namespace tbdprof::preload
