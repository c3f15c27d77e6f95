// run_routine: validate like the reference BLAS, quick-return on empty problems, launch the family's
// kernel for the element type on the handle's stream annotated with its roofline cost, and finish
// what real cuBLAS finishes on the host (results in host memory, parameter-validity info).
#include <library_types.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "handle.h"
#include "routine.h"
#include "routine_host.h"
#include "routine_params.h"

namespace tbdsim::cublas {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGridX = 65535;

const char kElemLetters[] = {'s', 'd', 'c', 'z', 'h', 't', 'i'};

// The element type of an Ex call's cudaDataType; Ex when the simulator does not model the type.
Elem elem_of_data_type(int type) {
    switch (type) {
        case CUDA_R_32F:
            return Elem::S;
        case CUDA_R_64F:
            return Elem::D;
        case CUDA_C_32F:
            return Elem::C;
        case CUDA_C_64F:
            return Elem::Z;
        case CUDA_R_16F:
            return Elem::H;
        case CUDA_R_16BF:
            return Elem::T;
        case CUDA_R_8I:
        case CUDA_R_8U:
        case CUDA_C_8I:
            return Elem::I;
        default:
            return Elem::Ex;
    }
}

int element_bytes(Elem e) {
    switch (e) {
        case Elem::D:
        case Elem::C:
            return 8;
        case Elem::Z:
            return 16;
        case Elem::H:
        case Elem::T:
            return 2;
        case Elem::I:
            return 1;
        default:
            return 4;
    }
}

bool is_complex(Elem e) {
    return e == Elem::C || e == Elem::Z;
}

bool is_vector_family(Family f) {
    return static_cast<int>(f) < static_cast<int>(Family::Gemm);
}

bool host_result_family(Family f) {
    return f == Family::Iamax || f == Family::Iamin || f == Family::DotEx || f == Family::DotcEx ||
           f == Family::Nrm2Ex || f == Family::AsumEx;
}

bool valid_enums(const RoutineArgs& a) {
    const auto op = [](int v) { return v == CUBLAS_OP_N || v == CUBLAS_OP_T || v == CUBLAS_OP_C; };
    return (a.side == CUBLAS_SIDE_LEFT || a.side == CUBLAS_SIDE_RIGHT) &&
           (a.uplo == CUBLAS_FILL_MODE_LOWER || a.uplo == CUBLAS_FILL_MODE_UPPER || a.uplo == CUBLAS_FILL_MODE_FULL) &&
           op(a.trans) && op(a.transa) && op(a.transb) &&
           (a.diag == CUBLAS_DIAG_NON_UNIT || a.diag == CUBLAS_DIAG_UNIT);
}

// The reference BLAS's checks that apply to every family: valid enumerators, no negative size, no
// zero increment for routines that walk vectors, leading dimensions of at least 1.
cublasStatus_t validate(Family f, const RoutineArgs& a) {
    if (!valid_enums(a)) return CUBLAS_STATUS_INVALID_VALUE;
    if (a.m < 0 || a.n < 0 || a.k < 0 || a.kl < 0 || a.ku < 0 || a.nrhs < 0 || a.batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (a.lda < 1 || a.ldb < 1 || a.ldc < 1) return CUBLAS_STATUS_INVALID_VALUE;
    const bool walks_vectors = is_vector_family(f) && f != Family::GemvBatched && f != Family::Rotg &&
                               f != Family::Rotmg && f != Family::Iamax && f != Family::Iamin && f != Family::Nrm2Ex &&
                               f != Family::AsumEx;
    if (walks_vectors && (a.incx == 0 || a.incy == 0)) return CUBLAS_STATUS_INVALID_VALUE;
    if (f == Family::GemvBatched && (a.incx == 0 || a.incy == 0)) return CUBLAS_STATUS_INVALID_VALUE;
    if (host_result_family(f) && a.result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

// The family's kernel for an element type, looked up in the handle's module on first use.
CUresult routine_kernel(cublasHandle_t handle, Family family, Elem elem, CUfunction* out) {
    std::string name = family_stem(family);
    name += '_';
    name += kElemLetters[static_cast<int>(elem)];
    std::lock_guard<std::mutex> lock(handle->routine_kernels_mutex);
    auto found = handle->routine_kernels.find(name);
    if (found != handle->routine_kernels.end()) {
        *out = found->second;
        return CUDA_SUCCESS;
    }
    const CUresult rc = handle->driver->module_get_function(out, handle->module, name.c_str());
    if (rc == CUDA_SUCCESS) handle->routine_kernels.emplace(name, *out);
    return rc;
}

TbdsimPrecision precision_of(Elem e) {
    return e == Elem::D || e == Elem::Z ? TBDSIM_PRECISION_FP64
           : e == Elem::I               ? TBDSIM_PRECISION_FP16  // no int8 peak in the model: the FP16 tensor peak
                                        : TBDSIM_PRECISION_FP32;
}

cublasStatus_t launch(cublasHandle_t handle, Family family, Elem elem, const RoutineArgs& a, const RoutineCost& cost) {
    CUfunction function = nullptr;
    if (routine_kernel(handle, family, elem, &function) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
    TbdsimRoutineParams params{};
    params.a = a.a, params.b = a.b, params.c = a.c, params.x = a.x, params.y = a.y;
    params.alpha = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE ? a.alpha : nullptr;
    params.beta = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE ? a.beta : nullptr;
    params.m = a.m, params.n = a.n, params.k = a.k;
    params.lda = a.lda, params.ldb = a.ldb, params.ldc = a.ldc, params.incx = a.incx, params.incy = a.incy;
    params.batch_count = a.batch;
    params.side = a.side, params.uplo = a.uplo, params.trans = std::max(a.trans, a.transa), params.diag = a.diag;
    const auto blocks = static_cast<unsigned>(
        std::clamp<double>((cost.output_elements + kThreads - 1) / kThreads, 1, static_cast<double>(kMaxGridX)));
    const blas::DriverEntryPoints& driver = *handle->driver;
    if (driver.private_api != nullptr && driver.private_api->struct_size >= sizeof(TbdsimPrivateApi))
        driver.private_api->annotate_next_launch_roofline(cost.flops, precision_of(elem), std::max(cost.bytes, 1.0));
    void* arguments[] = {&params};
    return driver.launch_kernel(function, blocks, 1, 1, kThreads, 1, 1, 0, handle->stream, arguments, nullptr) ==
                   CUDA_SUCCESS
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}

// What the routine leaves in host memory or reports through info arrays once it has run.
cublasStatus_t finish(cublasHandle_t handle, Family family, Elem elem, const RoutineArgs& a) {
    if (a.host_info != nullptr) *a.host_info = 0;
    // The factorizations report success per matrix (the simulator does not factorize): device memory
    // is host memory on the simulated GPU.
    if (a.device_info != nullptr) std::memset(a.device_info, 0, sizeof(int) * static_cast<size_t>(a.batch));
    if (host_result_family(family) && handle->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
        if (handle->driver->stream_synchronize(handle->stream) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
        reduce_on_host(family, elem, a);
    }
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t run_routine(Family family, Elem elem, RoutineArgs a) {
    cublasHandle_t handle = a.handle;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (elem == Elem::Ex) elem = elem_of_data_type(a.data_type);
    if (elem == Elem::Ex) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (const cublasStatus_t status = validate(family, a); status != CUBLAS_STATUS_SUCCESS) {
        if (a.host_info != nullptr) *a.host_info = -1;
        return status;
    }
    const bool scalar_rotation = family == Family::Rotg || family == Family::Rotmg;
    if (scalar_rotation && (elem == Elem::H || elem == Elem::T || elem == Elem::I ||
                            (family == Family::Rotmg && (elem == Elem::C || elem == Elem::Z))))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    // rotg and rotmg in host pointer mode work on host scalars only: computed on the host, no kernel.
    if (scalar_rotation && handle->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
        rotation_on_host(family, elem, a);
        return CUBLAS_STATUS_SUCCESS;
    }
    const RoutineCost cost = routine_cost(family, element_bytes(elem), is_complex(elem), a);
    const bool is_dot = family == Family::DotEx || family == Family::DotcEx;
    const bool empty_reduction = host_result_family(family) && (a.n <= 0 || (!is_dot && a.incx <= 0));
    if (cost.output_elements <= 0 || empty_reduction) {
        // Quick return of the reference BLAS: an empty problem does nothing (a reduction returns 0).
        if (host_result_family(family) && handle->pointer_mode == CUBLAS_POINTER_MODE_HOST)
            zero_host_result(family, elem, a);
        if (a.host_info != nullptr) *a.host_info = 0;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (const cublasStatus_t status = launch(handle, family, elem, a, cost); status != CUBLAS_STATUS_SUCCESS)
        return status;
    return finish(handle, family, elem, a);
}

}  // namespace tbdsim::cublas
