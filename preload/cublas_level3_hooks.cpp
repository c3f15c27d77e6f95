// cuBLAS level-3 routines beyond the S and Ex GEMMs (symm, hemm, syrk, herk, syr2k, her2k, syrkx,
// herkx, trmm, trsm, trsmBatched, geam, dgmm in S/D/C/Z, 32- and 64-bit; the D, C and Z GEMMs plain,
// strided- and pointer-array-batched; the S and D grouped GEMMs) as library calls, like the GEMMs in cublas_hooks.cpp:
// sizes, FLOPs, operand roles and extents, element types, and the launches made inside the call. Operand roles: a = A,
// b = B (x for dgmm), c = what the call writes (C; B for trsm). FLOPs count a real multiply-add as 2 and a complex one
// as 8 (docs/collector.md):
//   symm, hemm: 2 m n (m for the left side, n for the right)     geam: 3 m n      dgmm: m n
//   syrk, herk, syrkx, herkx: n (n+1) k    syr2k, her2k: 2 n (n+1) k
//   trmm, trsm: m n (m left, n right), per matrix for trsmBatched
// Sizes: m, n as the routine names them (m = n for the rank-k updates), k the reduced dimension
// (the triangle's order for symm/trmm/trsm), batch the number of matrices.
#include <cublas_api.h>  // not cublas_v2.h: its macros would rename the base names below
#include <dlfcn.h>

#include <cstring>

#include "cublas_common.h"
#include "hook_registry.h"
#include "library_call.h"

namespace tbdprof::preload {
namespace {

using Type = BlasType;

struct Level3Shape : BlasCall {
    uint64_t a_elements, b_elements, c_elements;  // extents; 0: not known
    int transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
    bool left = true;                // side, for symm/hemm/trmm/trsm
    double total_flops = -1;         // >= 0: the grouped GEMMs' sum over their groups
    bool follows_math_mode = false;  // SGEMM forms: the precision follows the handle's math mode
};

double real_flops(const Level3Shape& s) {
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    switch (s.op) {
        case raw::LibraryOp::Symm:
        case raw::LibraryOp::Hemm:
            return 2.0 * m * n * (s.left ? m : n);
        case raw::LibraryOp::Syrk:
        case raw::LibraryOp::Herk:
        case raw::LibraryOp::Syrkx:
        case raw::LibraryOp::Herkx:
            return n * (n + 1) * k;
        case raw::LibraryOp::Syr2k:
        case raw::LibraryOp::Her2k:
            return 2.0 * n * (n + 1) * k;
        case raw::LibraryOp::Trmm:
        case raw::LibraryOp::Trsm:
        case raw::LibraryOp::TrsmBatched:
            return m * n * (s.left ? m : n);
        case raw::LibraryOp::Geam:
            return 3.0 * m * n;
        case raw::LibraryOp::Dgmm:
            return m * n;
        case raw::LibraryOp::Gemm:
        case raw::LibraryOp::GemmStridedBatched:
        case raw::LibraryOp::GemmBatched:
            return 2.0 * m * n * k;
        default:
            return 0.0;
    }
}

double flops_of(const Level3Shape& s) {
    if (s.total_flops >= 0) return s.total_flops;
    if (s.m < 0 || s.n < 0 || s.k < 0 || s.batch < 0) return 0.0;
    return real_flops(s) * (is_complex(s.type) ? 4.0 : 1.0) * static_cast<double>(s.batch);
}

uint64_t element_bytes(Type t) {
    switch (t) {
        case Type::S:
            return 4;
        case Type::D:
        case Type::C:
            return 8;
        default:
            return 16;
    }
}

// Elements a column-major rows x cols matrix with leading dimension ld spans (0: unknown).
uint64_t extent(int64_t rows, int64_t cols, int64_t ld) {
    if (rows <= 0 || cols <= 0 || ld < rows) return 0;
    return static_cast<uint64_t>((cols - 1) * ld + rows);
}

template <typename Call>
cublasStatus_t record_level3(const Level3Shape& s, Call&& call) {
    return record_library_call(call, [&](ThreadState& thread, raw::RawLibraryCall& record) {
        record_blas_call(thread, record, s);
        // Pointer-array batches: the extents are those of one matrix, not knowable as a range.
        const bool one_range = s.op != raw::LibraryOp::TrsmBatched;
        const uint64_t bytes = element_bytes(s.type);
        if (one_range) {
            record.a_bytes = s.a_elements * bytes;
            record.b_bytes = s.b_elements * bytes;
            record.c_bytes = s.c_elements * bytes;
        }
        record.flops = flops_of(s);
        record.precision = is_double(s.type) ? raw::RawPrecision::Fp64 : raw::RawPrecision::Fp32;
        if (s.follows_math_mode) record_math_mode(record, s.handle, CUDA_R_32F, CUBLAS_COMPUTE_32F);
        record.transa = static_cast<uint8_t>(s.transa);
        record.transb = static_cast<uint8_t>(s.transb);
    });
}

// Rows and columns of op(X) given X's (the transposed forms swap them).
int64_t rows_of(int trans, int64_t rows, int64_t cols) {
    return trans == CUBLAS_OP_N ? rows : cols;
}

// A grouped GEMM's problems (sum of the group sizes) and FLOPs (sum of 2 m n k per problem).
template <typename I>
void grouped_totals(const I* m, const I* n, const I* k, const I* size, I groups, int64_t* problems, double* flops) {
    *problems = 0;
    *flops = 0;
    if (m == nullptr || n == nullptr || k == nullptr || size == nullptr) return;
    for (I g = 0; g < groups; ++g) {
        *problems += size[g];
        *flops += 2.0 * static_cast<double>(m[g]) * static_cast<double>(n[g]) * static_cast<double>(k[g]) *
                  static_cast<double>(size[g]);
    }
}

Level3Shape grouped_shape(const char* name, Type type, cublasHandle_t handle, int64_t m, int64_t n, int64_t k,
                          int64_t problems, double flops, const void* a, const void* b, const void* c) {
    Level3Shape s{name, raw::LibraryOp::GemmGroupedBatched, type, handle, m, n, k, problems, a, b, c, 0, 0, 0};
    s.total_flops = flops;
    s.follows_math_mode = type == Type::S;
    return s;
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;

// After the name: the BlasCall (op, type, handle, m, n, k, batch, a, b, c), then the extents and the rest.
#define TBD_LEVEL3_HOOK(...) TBD_CUBLAS_HOOK(Level3Shape, record_level3, __VA_ARGS__)

// symm, hemm: A is the side's order, B and C m x n.
#define TBD_SYMM(I, SUFFIX, base, op, T, type)                                                                 \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                              \
                    (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, I m, I n, const T* alpha, \
                     const T* A, I lda, const T* B, I ldb, const T* beta, T* C, I ldc),                        \
                    (h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc), op, type, h, m, n,             \
                    side == CUBLAS_SIDE_LEFT ? m : n, 1, A, B, C,                                              \
                    extent(side == CUBLAS_SIDE_LEFT ? m : n, side == CUBLAS_SIDE_LEFT ? m : n, lda),           \
                    extent(m, n, ldb), extent(m, n, ldc), CUBLAS_OP_N, CUBLAS_OP_N, side == CUBLAS_SIDE_LEFT)
TBD_CUBLAS_V2(TBD_SYMM, cublasSsymm, LibraryOp::Symm, float, Type::S)
TBD_CUBLAS_V2(TBD_SYMM, cublasDsymm, LibraryOp::Symm, double, Type::D)
TBD_CUBLAS_V2(TBD_SYMM, cublasCsymm, LibraryOp::Symm, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_SYMM, cublasZsymm, LibraryOp::Symm, cuDoubleComplex, Type::Z)
TBD_CUBLAS_V2(TBD_SYMM, cublasChemm, LibraryOp::Hemm, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_SYMM, cublasZhemm, LibraryOp::Hemm, cuDoubleComplex, Type::Z)

// syrk, herk (real alpha and beta): C (n x n) from op(A) (n x k).
#define TBD_SYRK(I, SUFFIX, base, op, S, T, type)                                                                \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                                \
                    (cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, I n, I k, const S* alpha, \
                     const T* A, I lda, const S* beta, T* C, I ldc),                                             \
                    (h, uplo, trans, n, k, alpha, A, lda, beta, C, ldc), op, type, h, n, n, k, 1, A, nullptr, C, \
                    extent(rows_of(trans, n, k), rows_of(trans, k, n), lda), 0, extent(n, n, ldc), trans)
TBD_CUBLAS_V2(TBD_SYRK, cublasSsyrk, LibraryOp::Syrk, float, float, Type::S)
TBD_CUBLAS_V2(TBD_SYRK, cublasDsyrk, LibraryOp::Syrk, double, double, Type::D)
TBD_CUBLAS_V2(TBD_SYRK, cublasCsyrk, LibraryOp::Syrk, cuComplex, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_SYRK, cublasZsyrk, LibraryOp::Syrk, cuDoubleComplex, cuDoubleComplex, Type::Z)
TBD_CUBLAS_V2(TBD_SYRK, cublasCherk, LibraryOp::Herk, float, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_SYRK, cublasZherk, LibraryOp::Herk, double, cuDoubleComplex, Type::Z)

// syr2k, her2k, syrkx, herkx: C (n x n) from op(A) and op(B) (n x k); her2k/herkx take a real beta.
#define TBD_SYR2K(I, SUFFIX, base, op, S, T, type)                                                                 \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                                  \
                    (cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, I n, I k, const T* alpha,   \
                     const T* A, I lda, const T* B, I ldb, const S* beta, T* C, I ldc),                            \
                    (h, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc), op, type, h, n, n, k, 1, A, B, C, \
                    extent(rows_of(trans, n, k), rows_of(trans, k, n), lda),                                       \
                    extent(rows_of(trans, n, k), rows_of(trans, k, n), ldb), extent(n, n, ldc), trans, trans)
TBD_CUBLAS_V2(TBD_SYR2K, cublasSsyr2k, LibraryOp::Syr2k, float, float, Type::S)
TBD_CUBLAS_V2(TBD_SYR2K, cublasDsyr2k, LibraryOp::Syr2k, double, double, Type::D)
TBD_CUBLAS_V2(TBD_SYR2K, cublasCsyr2k, LibraryOp::Syr2k, cuComplex, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_SYR2K, cublasZsyr2k, LibraryOp::Syr2k, cuDoubleComplex, cuDoubleComplex, Type::Z)
TBD_CUBLAS_V2(TBD_SYR2K, cublasCher2k, LibraryOp::Her2k, float, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_SYR2K, cublasZher2k, LibraryOp::Her2k, double, cuDoubleComplex, Type::Z)
TBD_CUBLAS_PLAIN(TBD_SYR2K, cublasSsyrkx, LibraryOp::Syrkx, float, float, Type::S)
TBD_CUBLAS_PLAIN(TBD_SYR2K, cublasDsyrkx, LibraryOp::Syrkx, double, double, Type::D)
TBD_CUBLAS_PLAIN(TBD_SYR2K, cublasCsyrkx, LibraryOp::Syrkx, cuComplex, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_SYR2K, cublasZsyrkx, LibraryOp::Syrkx, cuDoubleComplex, cuDoubleComplex, Type::Z)
TBD_CUBLAS_PLAIN(TBD_SYR2K, cublasCherkx, LibraryOp::Herkx, float, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_SYR2K, cublasZherkx, LibraryOp::Herkx, double, cuDoubleComplex, Type::Z)

// trmm (out of place: writes C) and trsm (in place: writes B); A is the side's triangle.
#define TBD_TRMM(I, SUFFIX, base, T, type)                                                                    \
    TBD_LEVEL3_HOOK(                                                                                          \
        base##SUFFIX,                                                                                         \
        (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,             \
         cublasDiagType_t diag, I m, I n, const T* alpha, const T* A, I lda, const T* B, I ldb, T* C, I ldc), \
        (h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc), LibraryOp::Trmm, type, h, m, n,    \
        side == CUBLAS_SIDE_LEFT ? m : n, 1, A, B, C,                                                         \
        extent(side == CUBLAS_SIDE_LEFT ? m : n, side == CUBLAS_SIDE_LEFT ? m : n, lda), extent(m, n, ldb),   \
        extent(m, n, ldc), trans, CUBLAS_OP_N, side == CUBLAS_SIDE_LEFT)
TBD_CUBLAS_V2(TBD_TRMM, cublasStrmm, float, Type::S)
TBD_CUBLAS_V2(TBD_TRMM, cublasDtrmm, double, Type::D)
TBD_CUBLAS_V2(TBD_TRMM, cublasCtrmm, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_TRMM, cublasZtrmm, cuDoubleComplex, Type::Z)

#define TBD_TRSM(I, SUFFIX, base, T, type)                                                                     \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                              \
                    (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,  \
                     cublasDiagType_t diag, I m, I n, const T* alpha, const T* A, I lda, T* B, I ldb),         \
                    (h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb), LibraryOp::Trsm, type, h, m, n, \
                    side == CUBLAS_SIDE_LEFT ? m : n, 1, A, nullptr, B,                                        \
                    extent(side == CUBLAS_SIDE_LEFT ? m : n, side == CUBLAS_SIDE_LEFT ? m : n, lda), 0,        \
                    extent(m, n, ldb), trans, CUBLAS_OP_N, side == CUBLAS_SIDE_LEFT)
TBD_CUBLAS_V2(TBD_TRSM, cublasStrsm, float, Type::S)
TBD_CUBLAS_V2(TBD_TRSM, cublasDtrsm, double, Type::D)
TBD_CUBLAS_V2(TBD_TRSM, cublasCtrsm, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_TRSM, cublasZtrsm, cuDoubleComplex, Type::Z)

#define TBD_TRSM_BATCHED(I, SUFFIX, base, T, type)                                                                    \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                                     \
                    (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,         \
                     cublasDiagType_t diag, I m, I n, const T* alpha, const T* const A[], I lda, T* const B[], I ldb, \
                     I batchCount),                                                                                   \
                    (h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batchCount), LibraryOp::TrsmBatched,    \
                    type, h, m, n, side == CUBLAS_SIDE_LEFT ? m : n, batchCount, A, nullptr, B, 0, 0, 0, trans,       \
                    CUBLAS_OP_N, side == CUBLAS_SIDE_LEFT)
TBD_CUBLAS_PLAIN(TBD_TRSM_BATCHED, cublasStrsmBatched, float, Type::S)
TBD_CUBLAS_PLAIN(TBD_TRSM_BATCHED, cublasDtrsmBatched, double, Type::D)
TBD_CUBLAS_PLAIN(TBD_TRSM_BATCHED, cublasCtrsmBatched, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_TRSM_BATCHED, cublasZtrsmBatched, cuDoubleComplex, Type::Z)

// geam: C = alpha op(A) + beta op(B), all m x n after op.
#define TBD_GEAM(I, SUFFIX, base, T, type)                                                                             \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                                      \
                    (cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n, const T* alpha,   \
                     const T* A, I lda, const T* beta, const T* B, I ldb, T* C, I ldc),                                \
                    (h, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc), LibraryOp::Geam, type, h, m, n, 0, \
                    1, A, B, C, extent(rows_of(transa, m, n), rows_of(transa, n, m), lda),                             \
                    extent(rows_of(transb, m, n), rows_of(transb, n, m), ldb), extent(m, n, ldc), transa, transb)
TBD_CUBLAS_PLAIN(TBD_GEAM, cublasSgeam, float, Type::S)
TBD_CUBLAS_PLAIN(TBD_GEAM, cublasDgeam, double, Type::D)
TBD_CUBLAS_PLAIN(TBD_GEAM, cublasCgeam, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_GEAM, cublasZgeam, cuDoubleComplex, Type::Z)

// dgmm: C = A diag(x) (right) or diag(x) A (left).
#define TBD_DGMM(I, SUFFIX, base, T, type)                                                                             \
    TBD_LEVEL3_HOOK(                                                                                                   \
        base##SUFFIX,                                                                                                  \
        (cublasHandle_t h, cublasSideMode_t mode, I m, I n, const T* A, I lda, const T* x, I incx, T* C, I ldc),       \
        (h, mode, m, n, A, lda, x, incx, C, ldc), LibraryOp::Dgmm, type, h, m, n, 0, 1, A, x, C, extent(m, n, lda), 0, \
        extent(m, n, ldc), CUBLAS_OP_N, CUBLAS_OP_N, mode == CUBLAS_SIDE_LEFT)
TBD_CUBLAS_PLAIN(TBD_DGMM, cublasSdgmm, float, Type::S)
TBD_CUBLAS_PLAIN(TBD_DGMM, cublasDdgmm, double, Type::D)
TBD_CUBLAS_PLAIN(TBD_DGMM, cublasCdgmm, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_DGMM, cublasZdgmm, cuDoubleComplex, Type::Z)

// The complex GEMMs (the real ones are in cublas_hooks.cpp).
#define TBD_CGEMM(I, SUFFIX, base, T, type)                                                                            \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                                      \
                    (cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k,              \
                     const T* alpha, const T* A, I lda, const T* B, I ldb, const T* beta, T* C, I ldc),                \
                    (h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), LibraryOp::Gemm, type, h, m, n, \
                    k, 1, A, B, C, extent(rows_of(transa, m, k), rows_of(transa, k, m), lda),                          \
                    extent(rows_of(transb, k, n), rows_of(transb, n, k), ldb), extent(m, n, ldc), transa, transb)
TBD_CUBLAS_V2(TBD_CGEMM, cublasCgemm, cuComplex, Type::C)
TBD_CUBLAS_V2(TBD_CGEMM, cublasZgemm, cuDoubleComplex, Type::Z)
TBD_CUBLAS_V2(TBD_CGEMM, cublasDgemm, double, Type::D)

// Strided and pointer-array batches of the D, C and Z GEMMs (S and Ex: cublas_hooks.cpp).
#define TBD_GEMM_STRIDED(I, SUFFIX, base, T, type)                                                                \
    TBD_LEVEL3_HOOK(                                                                                              \
        base##SUFFIX,                                                                                             \
        (cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k, const T* alpha,     \
         const T* A, I lda, long long strideA, const T* B, I ldb, long long strideB, const T* beta, T* C, I ldc,  \
         long long strideC, I batchCount),                                                                        \
        (h, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount), \
        LibraryOp::GemmStridedBatched, type, h, m, n, k, batchCount, A, B, C, 0, 0, 0, transa, transb)
TBD_CUBLAS_PLAIN(TBD_GEMM_STRIDED, cublasDgemmStridedBatched, double, Type::D)
TBD_CUBLAS_PLAIN(TBD_GEMM_STRIDED, cublasCgemmStridedBatched, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_GEMM_STRIDED, cublasZgemmStridedBatched, cuDoubleComplex, Type::Z)

#define TBD_GEMM_BATCHED(I, SUFFIX, base, T, type)                                                                  \
    TBD_LEVEL3_HOOK(base##SUFFIX,                                                                                   \
                    (cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k,           \
                     const T* alpha, const T* const Aarray[], I lda, const T* const Barray[], I ldb, const T* beta, \
                     T* const Carray[], I ldc, I batchCount),                                                       \
                    (h, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc, batchCount),   \
                    LibraryOp::GemmBatched, type, h, m, n, k, batchCount, Aarray, Barray, Carray, 0, 0, 0, transa,  \
                    transb)
TBD_CUBLAS_PLAIN(TBD_GEMM_BATCHED, cublasDgemmBatched, double, Type::D)
TBD_CUBLAS_PLAIN(TBD_GEMM_BATCHED, cublasCgemmBatched, cuComplex, Type::C)
TBD_CUBLAS_PLAIN(TBD_GEMM_BATCHED, cublasZgemmBatched, cuDoubleComplex, Type::Z)

// Grouped GEMMs: one row per call; m, n, k of the first group, batch the problems of all groups,
// FLOPs summed over the groups.
#define TBD_GROUPED(I, SUFFIX, base, T, type)                                                                       \
    namespace {                                                                                                     \
    LibraryFunction<decltype(&::base##SUFFIX)> real_##base##SUFFIX{#base #SUFFIX};                                  \
    }                                                                                                               \
    extern "C" TBD_VISIBLE cublasStatus_t base##SUFFIX(                                                             \
        cublasHandle_t h, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],           \
        const I m_array[], const I n_array[], const I k_array[], const T alpha_array[], const T* const Aarray[],    \
        const I lda_array[], const T* const Barray[], const I ldb_array[], const T beta_array[], T* const Carray[], \
        const I ldc_array[], I group_count, const I group_size[]) {                                                 \
        auto real = real_##base##SUFFIX.get();                                                                      \
        if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                  \
        int64_t problems = 0;                                                                                       \
        double flops = 0;                                                                                           \
        grouped_totals(m_array, n_array, k_array, group_size, group_count, &problems, &flops);                      \
        const bool any = group_count > 0 && m_array != nullptr && n_array != nullptr && k_array != nullptr;         \
        const Level3Shape s = grouped_shape(#base #SUFFIX, type, h, any ? m_array[0] : 0, any ? n_array[0] : 0,     \
                                            any ? k_array[0] : 0, problems, flops, Aarray, Barray, Carray);         \
        return record_level3(s, [&] {                                                                               \
            return real(h, transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, lda_array,   \
                        Barray, ldb_array, beta_array, Carray, ldc_array, group_count, group_size);                 \
        });                                                                                                         \
    }
TBD_CUBLAS_PLAIN(TBD_GROUPED, cublasSgemmGroupedBatched, float, Type::S)
TBD_CUBLAS_PLAIN(TBD_GROUPED, cublasDgemmGroupedBatched, double, Type::D)

namespace tbdprof::preload {

// A program that dlopens cuBLAS and looks these up gets our wrappers (library_call.h).
void* substitute_cublas_level3_symbol(const char* name, void* result) {
    if (std::strncmp(name, "cublas", 6) != 0) return nullptr;
    remember_cublas_handle_query(name, result);
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSsymm, cublasDsymm, cublasCsymm, cublasZsymm)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSsyrk, cublasDsyrk, cublasCsyrk, cublasZsyrk)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasSsyr2k, cublasDsyr2k, cublasCsyr2k, cublasZsyr2k)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasStrmm, cublasDtrmm, cublasCtrmm, cublasZtrmm)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasStrsm, cublasDtrsm, cublasCtrsm, cublasZtrsm)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasChemm, cublasZhemm, cublasCherk, cublasZherk)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_V2, cublasCher2k, cublasZher2k, cublasCgemm, cublasZgemm)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_PLAIN, cublasSsyrkx, cublasDsyrkx, cublasCsyrkx, cublasZsyrkx)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_PLAIN, cublasStrsmBatched, cublasDtrsmBatched, cublasCtrsmBatched,
                               cublasZtrsmBatched)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_PLAIN, cublasSgeam, cublasDgeam, cublasCgeam, cublasZgeam)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_PLAIN, cublasSdgmm, cublasDdgmm, cublasCdgmm, cublasZdgmm)
    TBD_CUBLAS_SUBSTITUTE_PLAIN(cublasCherkx)
    TBD_CUBLAS_SUBSTITUTE_PLAIN(cublasZherkx)
    TBD_CUBLAS_SUBSTITUTE_V2(cublasDgemm)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_PLAIN, cublasDgemmStridedBatched, cublasCgemmStridedBatched,
                               cublasZgemmStridedBatched, cublasDgemmBatched)
    TBD_CUBLAS_SUBSTITUTE_SDCZ(TBD_CUBLAS_SUBSTITUTE_PLAIN, cublasCgemmBatched, cublasZgemmBatched,
                               cublasSgemmGroupedBatched, cublasDgemmGroupedBatched)
    return nullptr;
}

}  // namespace tbdprof::preload
