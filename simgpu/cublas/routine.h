// The routines of cuBLAS beyond the GEMM catalog and the level-1/2 kernels of vector_launch: every
// other level-1, level-2 and level-3 routine, the batched LAPACK-like routines and the cublasXt
// routines. Their entry points are generated from the toolkit's header (gen_routines.py): each one
// fills a RoutineArgs by parameter name and calls run_routine with its family and element type. A
// family is one descriptor: a kernel stem and the formulas of its FLOPs and bytes (routine_cost.cpp),
// so that the one launched kernel is timed as a roofline by the simulated driver.
#pragma once

#include <cublas_api.h>

#include <cstdint>

namespace tbdsim::cublas {

// Kept in the order of kFamilies (routine_cost.cpp); gen_routines.py names them.
enum class Family : int {
    // level 1
    Swap,
    Rot,
    Rotm,
    Rotg,
    Rotmg,
    Iamax,
    Iamin,
    AxpyEx,
    DotEx,
    DotcEx,
    ScalEx,
    Nrm2Ex,
    AsumEx,
    CopyEx,
    // level 2
    Gbmv,
    Sbmv,
    Hbmv,
    Symv,
    Hemv,
    Spmv,
    Hpmv,
    Syr,
    Her,
    Spr,
    Hpr,
    Syr2,
    Her2,
    Spr2,
    Hpr2,
    Tbmv,
    Tbsv,
    Tpmv,
    Tpsv,
    Trmv,
    Trsv,
    GemvBatched,
    // level 3
    Gemm,
    Gemm3m,
    Symm,
    Hemm,
    Spmm,
    Syrk,
    Herk,
    Syr2k,
    Her2k,
    Syrkx,
    Herkx,
    Trmm,
    Trsm,
    TrsmBatched,
    Geam,
    Dgmm,
    // batched LAPACK-like routines and packed-format conversions
    Getrf,
    Getri,
    Getrs,
    Matinv,
    Geqrf,
    Gels,
    Tpttr,
    Trttp,
    Count,
};

// The element type of a routine's data: the letter of its name (S, D, C, Z; H and T for half and
// bfloat16 data of the mixed gemv forms; I for 8-bit integers), or Ex for the cudaDataType argument.
enum class Elem : int { S, D, C, Z, H, T, I, Ex };

// A routine's arguments by their documented names; fields a routine does not have stay at their defaults.
struct RoutineArgs {
    cublasHandle_t handle = nullptr;
    bool index64 = false;  // the _64 form (integer results are int64_t)
    int side = CUBLAS_SIDE_LEFT, uplo = CUBLAS_FILL_MODE_LOWER, trans = CUBLAS_OP_N, transa = CUBLAS_OP_N,
        transb = CUBLAS_OP_N, diag = CUBLAS_DIAG_NON_UNIT;
    int64_t m = 0, n = 0, k = 0, kl = 0, ku = 0, nrhs = 0;
    int64_t lda = 1, ldb = 1, ldc = 1, incx = 1, incy = 1;
    int64_t batch = 1;
    const void* alpha = nullptr;
    const void* beta = nullptr;
    const void* a = nullptr;     // A, Aarray, AP
    const void* b = nullptr;     // B, Barray
    const void* c = nullptr;     // C, Carray, Ainv
    const void* x = nullptr;     // x, xarray
    const void* y = nullptr;     // y, yarray
    void* result = nullptr;      // iamax/iamin/dot/nrm2/asum
    int* host_info = nullptr;    // getrs/geqrf/gels: parameter validity, on the host
    int* device_info = nullptr;  // getrf/getri/matinv/gels: one int per matrix, in device memory
    // rotg (a, b, c, s) and rotmg (d1, d2, x1, y1, param); rot/rotm use c, s and param.
    void* rot_a = nullptr;
    void* rot_b = nullptr;
    void* rot_c = nullptr;
    void* rot_s = nullptr;
    void* d1 = nullptr;
    void* d2 = nullptr;
    void* x1 = nullptr;
    const void* y1 = nullptr;
    void* param = nullptr;
    int data_type = -1;    // cudaDataType of the data (Ex forms)
    int result_type = -1;  // cudaDataType of a reduction's result (Ex forms)
};

cublasStatus_t run_routine(Family family, Elem elem, RoutineArgs args);

// A cublasXt routine: run on the Xt handle's first selected device, blocking until it is done
// (cublasXt calls return when the result is in place).
cublasStatus_t run_xt_routine(void* xt_handle, Family family, Elem elem, RoutineArgs args);

// FLOPs and bytes of one call (all batch entries), the formulas routine_cost.cpp documents.
struct RoutineCost {
    double flops = 0;
    double bytes = 0;
    double output_elements = 0;  // sizes the grid
};
RoutineCost routine_cost(Family family, int element_bytes, bool complex, const RoutineArgs& args);
const char* family_stem(Family family);

}  // namespace tbdsim::cublas
