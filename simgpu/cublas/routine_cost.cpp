// The FLOPs and bytes of each routine family: what the simulated driver's roofline times a launch by.
// Conventions (docs/simgpu-cublas-cupti.md): a multiply-add is 2 FLOPs, a complex multiply-add 8 real
// FLOPs (so complex routines count 4x their real twin), except the 3m GEMMs, which do 3 real products
// where a complex product does 4 (6 mnk). Triangular and symmetric operands count the triangle that is
// read (n(n+1)/2 elements); the LAPACK-like routines use the standard operation counts of LAPACK
// (getrf 2/3 n^3, getri 4/3 n^3, getrs 2 n^2 nrhs, geqrf 2mn^2 - 2/3 n^3). Bytes count every operand
// element read once and every output element written once (read too when beta scales it).
#include <algorithm>
#include <iterator>

#include "routine.h"

namespace tbdsim::cublas {
namespace {

const char* const kStems[] = {
    "swap_kernel",          "rot_kernel",           "rotm_kernel",          "rotg_kernel",
    "rotmg_kernel",         "iamax_kernel",         "iamin_kernel",         "axpy_ex_kernel",
    "dot_ex_kernel",        "dotc_ex_kernel",       "scal_ex_kernel",       "nrm2_ex_kernel",
    "asum_ex_kernel",       "copy_ex_kernel",       "gbmv_kernel",          "sbmv_kernel",
    "hbmv_kernel",          "symv_kernel",          "hemv_kernel",          "spmv_kernel",
    "hpmv_kernel",          "syr_kernel",           "her_kernel",           "spr_kernel",
    "hpr_kernel",           "syr2_kernel",          "her2_kernel",          "spr2_kernel",
    "hpr2_kernel",          "tbmv_kernel",          "tbsv_kernel",          "tpmv_kernel",
    "tpsv_kernel",          "trmv_kernel",          "trsv_kernel",          "gemv_batched_kernel",
    "gemm_kernel",          "gemm3m_kernel",        "symm_kernel",          "hemm_kernel",
    "spmm_kernel",          "syrk_kernel",          "herk_kernel",          "syr2k_kernel",
    "her2k_kernel",         "syrkx_kernel",         "herkx_kernel",         "trmm_kernel",
    "trsm_kernel",          "trsm_batched_kernel",  "geam_kernel",          "dgmm_kernel",
    "getrf_batched_kernel", "getri_batched_kernel", "getrs_batched_kernel", "matinv_batched_kernel",
    "geqrf_batched_kernel", "gels_batched_kernel",  "tpttr_kernel",         "trttp_kernel",
};
static_assert(std::size(kStems) == static_cast<std::size_t>(Family::Count));

double d(int64_t v) {
    return static_cast<double>(std::max<int64_t>(v, 0));
}

// Elements of a triangle (with its diagonal) of an n x n matrix.
double triangle(int64_t n) {
    return d(n) * (d(n) + 1) / 2;
}

// Level 1 and 2: FLOPs (real multiply-adds counted 2) and elements moved, before complex scaling.
RoutineCost level1(Family f, const RoutineArgs& a) {
    const double n = d(a.n);
    switch (f) {
        case Family::Swap:
            return {0, 4 * n, n};
        case Family::Rot:
        case Family::Rotm:
            return {6 * n, 4 * n, n};
        case Family::Rotg:
        case Family::Rotmg:
            return {10, 8, 1};
        case Family::Iamax:
        case Family::Iamin:
        case Family::AsumEx:
            return {n, n, 1};
        case Family::Nrm2Ex:
            return {2 * n, n, 1};
        case Family::DotEx:
        case Family::DotcEx:
            return {2 * n, 2 * n, 1};
        case Family::AxpyEx:
            return {2 * n, 3 * n, n};
        case Family::ScalEx:
            return {n, 2 * n, n};
        case Family::CopyEx:
            return {0, 2 * n, n};
        default:
            return {};
    }
}

RoutineCost level2(Family f, const RoutineArgs& a) {
    const double n = d(a.n), m = d(a.m), k = d(a.k);
    switch (f) {
        case Family::Gbmv: {
            const double band = (d(a.kl) + d(a.ku) + 1) * std::min(m, n);
            return {2 * band, band + 2 * (m + n), a.trans == CUBLAS_OP_N ? m : n};
        }
        case Family::Sbmv:
        case Family::Hbmv:
            return {2 * (2 * k + 1) * n, (k + 1) * n + 3 * n, n};
        case Family::Symv:
        case Family::Hemv:
        case Family::Spmv:
        case Family::Hpmv:
            return {2 * n * n, triangle(a.n) + 3 * n, n};
        case Family::Syr:
        case Family::Her:
        case Family::Spr:
        case Family::Hpr:
            return {2 * triangle(a.n), 2 * triangle(a.n) + n, triangle(a.n)};
        case Family::Syr2:
        case Family::Her2:
        case Family::Spr2:
        case Family::Hpr2:
            return {4 * triangle(a.n), 2 * triangle(a.n) + 2 * n, triangle(a.n)};
        case Family::Tbmv:
        case Family::Tbsv:
            return {2 * (k + 1) * n, (k + 1) * n + 2 * n, n};
        case Family::Tpmv:
        case Family::Tpsv:
        case Family::Trmv:
        case Family::Trsv:
            return {2 * triangle(a.n), triangle(a.n) + 2 * n, n};
        case Family::GemvBatched: {
            const double rows = a.trans == CUBLAS_OP_N ? m : n;
            return {2 * m * n, m * n + (m + n) + rows, rows};
        }
        default:
            return {};
    }
}

RoutineCost level3(Family f, const RoutineArgs& a) {
    const double m = d(a.m), n = d(a.n), k = d(a.k);
    const bool left = a.side == CUBLAS_SIDE_LEFT;
    switch (f) {
        case Family::Gemm:
            return {2 * m * n * k, m * k + k * n + 2 * m * n, m * n};
        case Family::Gemm3m:
            return {0, m * k + k * n + 2 * m * n, m * n};  // FLOPs set by the caller
        case Family::Symm:
        case Family::Hemm:
        case Family::Spmm: {
            const double order = left ? m : n;
            return {2 * m * n * order, triangle(left ? a.m : a.n) + 3 * m * n, m * n};
        }
        case Family::Syrk:
        case Family::Herk:
            return {2 * triangle(a.n) * k, n * k + 2 * triangle(a.n), triangle(a.n)};
        case Family::Syr2k:
        case Family::Her2k:
            return {4 * triangle(a.n) * k, 2 * n * k + 2 * triangle(a.n), triangle(a.n)};
        case Family::Syrkx:
        case Family::Herkx:
            return {2 * triangle(a.n) * k, 2 * n * k + 2 * triangle(a.n), triangle(a.n)};
        case Family::Trmm:
        case Family::Trsm:
        case Family::TrsmBatched: {
            const double order = left ? m : n;
            return {order * m * n, triangle(left ? a.m : a.n) + 2 * m * n, m * n};
        }
        case Family::Geam:
            return {3 * m * n, 3 * m * n, m * n};
        case Family::Dgmm:
            return {m * n, 2 * m * n + (left ? m : n), m * n};
        default:
            return {};
    }
}

RoutineCost lapack(Family f, const RoutineArgs& a) {
    const double m = d(a.m), n = d(a.n), nrhs = d(a.nrhs);
    switch (f) {
        case Family::Getrf:
            return {2.0 / 3.0 * n * n * n, 2 * n * n, n * n};
        case Family::Getri:
            return {4.0 / 3.0 * n * n * n, 2 * n * n, n * n};
        case Family::Getrs:
            return {2 * n * n * nrhs, n * n + 2 * n * nrhs, n * nrhs};
        case Family::Matinv:
            return {2 * n * n * n, 2 * n * n, n * n};  // getrf + getri
        case Family::Geqrf: {
            const double qr = 2 * m * n * n - 2.0 / 3.0 * n * n * n;
            return {std::max(qr, 0.0), 2 * m * n + n, m * n};
        }
        case Family::Gels: {
            const double qr = std::max(2 * m * n * n - 2.0 / 3.0 * n * n * n, 0.0);
            return {qr + 4 * m * n * nrhs, 2 * m * n + 2 * m * nrhs, m * nrhs};
        }
        case Family::Tpttr:
        case Family::Trttp:
            return {0, 2 * triangle(a.n), triangle(a.n)};
        default:
            return {};
    }
}

}  // namespace

const char* family_stem(Family family) {
    return kStems[static_cast<int>(family)];
}

RoutineCost routine_cost(Family family, int element_bytes, bool complex, const RoutineArgs& args) {
    const int f = static_cast<int>(family);
    RoutineCost cost = f < static_cast<int>(Family::Gbmv)    ? level1(family, args)
                       : f < static_cast<int>(Family::Gemm)  ? level2(family, args)
                       : f < static_cast<int>(Family::Getrf) ? level3(family, args)
                                                             : lapack(family, args);
    if (family == Family::Gemm3m)
        cost.flops = 6 * d(args.m) * d(args.n) * d(args.k);
    else if (complex)
        cost.flops *= 4;  // a complex multiply-add: 4 real products and 4 sums
    const double batch = d(args.batch);
    cost.flops *= batch;
    cost.bytes *= element_bytes * batch;
    cost.output_elements *= batch;
    return cost;
}

}  // namespace tbdsim::cublas
