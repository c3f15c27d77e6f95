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

struct VectorShape {
    const char* name;
    raw::LibraryOp op;
    Type type;
    cublasHandle_t handle;
    int64_t m, n;
    const void *a, *b, *c;
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
        record.name_string = collector::intern_string(thread, s.name);
        record.stream = reinterpret_cast<uint64_t>(cublas_stream_of(s.handle));
        record.a = reinterpret_cast<uint64_t>(s.a);
        record.b = reinterpret_cast<uint64_t>(s.b);
        record.c = reinterpret_cast<uint64_t>(s.c);
        record.m = s.m;
        record.n = s.n;
        record.k = 0;
        record.batch = 1;
        record.flops = flops_of(s);
        record.op = s.op;
        record.a_type = record.b_type = record.c_type = data_type(s.type);
        record.compute_type = compute_type(s.type);
    });
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;

// One wrapper per exported entry point: NAME is the symbol, PARAMS its parameter list, ARGS the
// forwarded arguments, SHAPE the VectorShape initializer after the name. REAL_<symbol> is the real
// function (found by dlsym(RTLD_NEXT) or remembered from the program's dlsym).
#define TBD_VECTOR_HOOK(NAME, PARAMS, ARGS, ...)                                                   \
    namespace {                                                                                    \
    LibraryFunction<decltype(&::NAME)> real_##NAME{#NAME};                                         \
    }                                                                                              \
    extern "C" TBD_VISIBLE cublasStatus_t NAME PARAMS {                                            \
        auto real = real_##NAME.get();                                                             \
        if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                 \
        const VectorShape s{#NAME, __VA_ARGS__};                                                   \
        return record_vector(s, [&] { return real ARGS; });                                        \
    }

#define TBD_BOTH_WIDTHS(MACRO, ...) MACRO(int, _v2, __VA_ARGS__) MACRO(int64_t, _v2_64, __VA_ARGS__)

#define TBD_DOT(I, SUFFIX, base, T, R, type)                                                                    \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* x, I incx, const T* y, I incy, R* result), \
                    (h, n, x, incx, y, incy, result), LibraryOp::Dot, type, h, 1, n, x, y, result)
TBD_BOTH_WIDTHS(TBD_DOT, cublasSdot, float, float, Type::S)
TBD_BOTH_WIDTHS(TBD_DOT, cublasDdot, double, double, Type::D)
TBD_BOTH_WIDTHS(TBD_DOT, cublasCdotu, cuComplex, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_DOT, cublasCdotc, cuComplex, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_DOT, cublasZdotu, cuDoubleComplex, cuDoubleComplex, Type::Z)
TBD_BOTH_WIDTHS(TBD_DOT, cublasZdotc, cuDoubleComplex, cuDoubleComplex, Type::Z)

#define TBD_AXPY(I, SUFFIX, base, T, type)                                                                       \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* alpha, const T* x, I incx, T* y, I incy),   \
                    (h, n, alpha, x, incx, y, incy), LibraryOp::Axpy, type, h, 1, n, x, nullptr, y)
TBD_BOTH_WIDTHS(TBD_AXPY, cublasSaxpy, float, Type::S)
TBD_BOTH_WIDTHS(TBD_AXPY, cublasDaxpy, double, Type::D)
TBD_BOTH_WIDTHS(TBD_AXPY, cublasCaxpy, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_AXPY, cublasZaxpy, cuDoubleComplex, Type::Z)

#define TBD_SCAL(I, SUFFIX, base, A, T, type, real_alpha)                                                        \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const A* alpha, T* x, I incx), (h, n, alpha, x, incx), \
                    LibraryOp::Scal, type, h, 1, n, x, nullptr, x, real_alpha)
TBD_BOTH_WIDTHS(TBD_SCAL, cublasSscal, float, float, Type::S, false)
TBD_BOTH_WIDTHS(TBD_SCAL, cublasDscal, double, double, Type::D, false)
TBD_BOTH_WIDTHS(TBD_SCAL, cublasCscal, cuComplex, cuComplex, Type::C, false)
TBD_BOTH_WIDTHS(TBD_SCAL, cublasCsscal, float, cuComplex, Type::C, true)
TBD_BOTH_WIDTHS(TBD_SCAL, cublasZscal, cuDoubleComplex, cuDoubleComplex, Type::Z, false)
TBD_BOTH_WIDTHS(TBD_SCAL, cublasZdscal, double, cuDoubleComplex, Type::Z, true)

#define TBD_REDUCE(I, SUFFIX, base, op, T, R, type)                                                             \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* x, I incx, R* result), (h, n, x, incx, result), \
                    op, type, h, 1, n, x, nullptr, result)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasSnrm2, LibraryOp::Nrm2, float, float, Type::S)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasDnrm2, LibraryOp::Nrm2, double, double, Type::D)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasScnrm2, LibraryOp::Nrm2, cuComplex, float, Type::C)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasDznrm2, LibraryOp::Nrm2, cuDoubleComplex, double, Type::Z)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasSasum, LibraryOp::Asum, float, float, Type::S)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasDasum, LibraryOp::Asum, double, double, Type::D)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasScasum, LibraryOp::Asum, cuComplex, float, Type::C)
TBD_BOTH_WIDTHS(TBD_REDUCE, cublasDzasum, LibraryOp::Asum, cuDoubleComplex, double, Type::Z)

#define TBD_COPY(I, SUFFIX, base, T, type)                                                                     \
    TBD_VECTOR_HOOK(base##SUFFIX, (cublasHandle_t h, I n, const T* x, I incx, T* y, I incy),                 \
                    (h, n, x, incx, y, incy), LibraryOp::Copy, type, h, 1, n, x, nullptr, y)
TBD_BOTH_WIDTHS(TBD_COPY, cublasScopy, float, Type::S)
TBD_BOTH_WIDTHS(TBD_COPY, cublasDcopy, double, Type::D)
TBD_BOTH_WIDTHS(TBD_COPY, cublasCcopy, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_COPY, cublasZcopy, cuDoubleComplex, Type::Z)

#define TBD_GEMV(I, SUFFIX, base, T, type)                                                                      \
    TBD_VECTOR_HOOK(base##SUFFIX,                                                                              \
                    (cublasHandle_t h, cublasOperation_t trans, I m, I n, const T* alpha, const T* a, I lda,   \
                     const T* x, I incx, const T* beta, T* y, I incy),                                         \
                    (h, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), LibraryOp::Gemv, type, h, m, n, a, x, y)
TBD_BOTH_WIDTHS(TBD_GEMV, cublasSgemv, float, Type::S)
TBD_BOTH_WIDTHS(TBD_GEMV, cublasDgemv, double, Type::D)
TBD_BOTH_WIDTHS(TBD_GEMV, cublasCgemv, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_GEMV, cublasZgemv, cuDoubleComplex, Type::Z)

#define TBD_GER(I, SUFFIX, base, T, type)                                                                       \
    TBD_VECTOR_HOOK(base##SUFFIX,                                                                              \
                    (cublasHandle_t h, I m, I n, const T* alpha, const T* x, I incx, const T* y, I incy, T* a,  \
                     I lda),                                                                                    \
                    (h, m, n, alpha, x, incx, y, incy, a, lda), LibraryOp::Ger, type, h, m, n, x, y, a)
TBD_BOTH_WIDTHS(TBD_GER, cublasSger, float, Type::S)
TBD_BOTH_WIDTHS(TBD_GER, cublasDger, double, Type::D)
TBD_BOTH_WIDTHS(TBD_GER, cublasCgeru, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_GER, cublasCgerc, cuComplex, Type::C)
TBD_BOTH_WIDTHS(TBD_GER, cublasZgeru, cuDoubleComplex, Type::Z)
TBD_BOTH_WIDTHS(TBD_GER, cublasZgerc, cuDoubleComplex, Type::Z)

namespace tbdprof::preload {

// A program that dlopens cuBLAS and looks these up gets our wrappers (library_call.h).
void* substitute_cublas_vector_symbol(const char* name, void* result) {
    if (std::strncmp(name, "cublas", 6) != 0) return nullptr;
    remember_cublas_handle_query(name, result);
#define TBD_SUBSTITUTE(NAME)                                                                            \
    if (std::strcmp(name, #NAME) == 0) return substitute_library_function(real_##NAME, &::NAME, result);
#define TBD_SUBSTITUTE_BOTH(base) TBD_SUBSTITUTE(base##_v2) TBD_SUBSTITUTE(base##_v2_64)
    TBD_SUBSTITUTE_BOTH(cublasSdot) TBD_SUBSTITUTE_BOTH(cublasDdot) TBD_SUBSTITUTE_BOTH(cublasCdotu)
    TBD_SUBSTITUTE_BOTH(cublasCdotc) TBD_SUBSTITUTE_BOTH(cublasZdotu) TBD_SUBSTITUTE_BOTH(cublasZdotc)
    TBD_SUBSTITUTE_BOTH(cublasSaxpy) TBD_SUBSTITUTE_BOTH(cublasDaxpy) TBD_SUBSTITUTE_BOTH(cublasCaxpy)
    TBD_SUBSTITUTE_BOTH(cublasZaxpy) TBD_SUBSTITUTE_BOTH(cublasSscal) TBD_SUBSTITUTE_BOTH(cublasDscal)
    TBD_SUBSTITUTE_BOTH(cublasCscal) TBD_SUBSTITUTE_BOTH(cublasCsscal) TBD_SUBSTITUTE_BOTH(cublasZscal)
    TBD_SUBSTITUTE_BOTH(cublasZdscal) TBD_SUBSTITUTE_BOTH(cublasSnrm2) TBD_SUBSTITUTE_BOTH(cublasDnrm2)
    TBD_SUBSTITUTE_BOTH(cublasScnrm2) TBD_SUBSTITUTE_BOTH(cublasDznrm2) TBD_SUBSTITUTE_BOTH(cublasSasum)
    TBD_SUBSTITUTE_BOTH(cublasDasum) TBD_SUBSTITUTE_BOTH(cublasScasum) TBD_SUBSTITUTE_BOTH(cublasDzasum)
    TBD_SUBSTITUTE_BOTH(cublasScopy) TBD_SUBSTITUTE_BOTH(cublasDcopy) TBD_SUBSTITUTE_BOTH(cublasCcopy)
    TBD_SUBSTITUTE_BOTH(cublasZcopy) TBD_SUBSTITUTE_BOTH(cublasSgemv) TBD_SUBSTITUTE_BOTH(cublasDgemv)
    TBD_SUBSTITUTE_BOTH(cublasCgemv) TBD_SUBSTITUTE_BOTH(cublasZgemv) TBD_SUBSTITUTE_BOTH(cublasSger)
    TBD_SUBSTITUTE_BOTH(cublasDger) TBD_SUBSTITUTE_BOTH(cublasCgeru) TBD_SUBSTITUTE_BOTH(cublasCgerc)
    TBD_SUBSTITUTE_BOTH(cublasZgeru) TBD_SUBSTITUTE_BOTH(cublasZgerc)
#undef TBD_SUBSTITUTE_BOTH
#undef TBD_SUBSTITUTE
    return nullptr;
}

}  // namespace tbdprof::preload
