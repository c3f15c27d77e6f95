#include "vector_launch.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>

#include "handle.h"
#include "vector_params.h"

namespace tbdsim::cublas {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

const char* const kOpNames[] = {"dot_kernel",  "axpy_kernel_val", "scal_kernel_val", "nrm2_kernel",
                                "asum_kernel", "copy_kernel",     "gemv2N_kernel",   "ger_kernel"};
const char kTypeLetters[] = {'s', 'd', 'c', 'z'};

bool is_complex(DataType t) {
    return t == DataType::C || t == DataType::Z;
}
bool is_double(DataType t) {
    return t == DataType::D || t == DataType::Z;
}

// The kernel of an operation for a data type, looked up in the handle's module on first use.
CUresult vector_kernel(cublasHandle_t handle, const VectorRequest& r, CUfunction* out) {
    const bool transposed_gemv = r.op == VectorOp::Gemv && r.trans != CUBLAS_OP_N;
    const int slot = transposed_gemv ? static_cast<int>(VectorOp::Count) : static_cast<int>(r.op);
    CUfunction& cached = handle->vector_kernels[slot][static_cast<int>(r.type)];
    if (cached == nullptr) {
        std::string name = transposed_gemv ? "gemv2T_kernel_val" : kOpNames[static_cast<int>(r.op)];
        name += '_';
        name += kTypeLetters[static_cast<int>(r.type)];
        if (CUresult rc = handle->driver->module_get_function(&cached, handle->module, name.c_str());
            rc != CUDA_SUCCESS)
            return rc;
    }
    *out = cached;
    return CUDA_SUCCESS;
}

// A host scalar (alpha, beta) as (re, im).
void read_scalar(const void* p, DataType type, bool real_scalar, double& re, double& im) {
    re = im = 0;
    if (p == nullptr) return;
    const DataType scalar = real_scalar ? (is_double(type) ? DataType::D : DataType::S) : type;
    switch (scalar) {
        case DataType::S:
            re = *static_cast<const float*>(p);
            break;
        case DataType::D:
            re = *static_cast<const double*>(p);
            break;
        case DataType::C:
            re = static_cast<const float*>(p)[0];
            im = static_cast<const float*>(p)[1];
            break;
        default:
            re = static_cast<const double*>(p)[0];
            im = static_cast<const double*>(p)[1];
            break;
    }
}

std::complex<double> element(const void* base, DataType type, int64_t index) {
    switch (type) {
        case DataType::S:
            return static_cast<const float*>(base)[index];
        case DataType::D:
            return static_cast<const double*>(base)[index];
        case DataType::C:
            return {static_cast<const float*>(base)[2 * index], static_cast<const float*>(base)[2 * index + 1]};
        default:
            return {static_cast<const double*>(base)[2 * index], static_cast<const double*>(base)[2 * index + 1]};
    }
}

// Element i of a strided vector (negative increments start from the end, as BLAS defines).
std::complex<double> strided(const void* base, DataType type, int64_t n, int64_t inc, int64_t i) {
    const int64_t index = inc >= 0 ? i * inc : (n - 1 - i) * -inc;
    return element(base, type, index);
}

// The value a reduction returns, computed from the operands' bytes once the stream has reached it.
void reduce_on_host(const VectorRequest& r) {
    std::complex<double> sum = 0;
    double real_sum = 0;
    for (int64_t i = 0; i < r.n; ++i) {
        const std::complex<double> x = strided(r.x, r.type, r.n, r.incx, i);
        if (r.op == VectorOp::Dot)
            sum += (r.conjugate ? std::conj(x) : x) * strided(r.y, r.type, r.n, r.incy, i);
        else if (r.op == VectorOp::Nrm2)
            real_sum += std::norm(x);
        else
            real_sum += std::abs(x.real()) + std::abs(x.imag());  // asum: |re| + |im|, as BLAS defines
    }
    if (r.op == VectorOp::Nrm2) real_sum = std::sqrt(real_sum);
    if (r.op != VectorOp::Dot) {  // nrm2/asum of complex data return a real scalar
        if (is_double(r.type))
            *static_cast<double*>(r.result) = real_sum;
        else
            *static_cast<float*>(r.result) = static_cast<float>(real_sum);
        return;
    }
    switch (r.type) {
        case DataType::S:
            *static_cast<float*>(r.result) = static_cast<float>(sum.real());
            break;
        case DataType::D:
            *static_cast<double*>(r.result) = sum.real();
            break;
        case DataType::C:
            static_cast<float*>(r.result)[0] = static_cast<float>(sum.real());
            static_cast<float*>(r.result)[1] = static_cast<float>(sum.imag());
            break;
        default:
            static_cast<double*>(r.result)[0] = sum.real();
            static_cast<double*>(r.result)[1] = sum.imag();
            break;
    }
}

void zero_result(const VectorRequest& r) {
    const bool real_result = r.op != VectorOp::Dot;
    size_t bytes = is_double(r.type) ? 8 : 4;
    if (!real_result && is_complex(r.type)) bytes *= 2;
    std::memset(r.result, 0, bytes);
}

bool is_reduction(VectorOp op) {
    return op == VectorOp::Dot || op == VectorOp::Nrm2 || op == VectorOp::Asum;
}

// Real cuBLAS's argument checks: negative sizes, zero increments, too small leading dimensions.
cublasStatus_t validate(const VectorRequest& r) {
    const bool level2 = r.op == VectorOp::Gemv || r.op == VectorOp::Ger;
    if (level2) {
        if (r.op == VectorOp::Gemv && r.trans != CUBLAS_OP_N && r.trans != CUBLAS_OP_T && r.trans != CUBLAS_OP_C)
            return CUBLAS_STATUS_INVALID_VALUE;
        if (r.m < 0 || r.n < 0 || r.incx == 0 || r.incy == 0 || r.lda < std::max<int64_t>(1, r.m))
            return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (is_reduction(r.op) && r.result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

double vector_flops(const VectorRequest& r) {
    const double n = static_cast<double>(std::max<int64_t>(r.n, 0));
    const double mn = static_cast<double>(std::max<int64_t>(r.m, 0)) * n;
    const double complex_madd = is_complex(r.type) ? 4.0 : 1.0;
    switch (r.op) {
        case VectorOp::Dot:
        case VectorOp::Axpy:
            return 2.0 * n * complex_madd;
        case VectorOp::Scal:
            return n * (is_complex(r.type) ? (r.real_scalar ? 2.0 : 6.0) : 1.0);
        case VectorOp::Nrm2:
            return 2.0 * n * (is_complex(r.type) ? 2.0 : 1.0);
        case VectorOp::Asum:
            return n * (is_complex(r.type) ? 2.0 : 1.0);
        case VectorOp::Copy:
            return 0.0;
        case VectorOp::Gemv:
        case VectorOp::Ger:
            return 2.0 * mn * complex_madd;
        default:
            return 0.0;
    }
}

cublasStatus_t run_vector(cublasHandle_t handle, const VectorRequest& r) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (cublasStatus_t status = validate(r); status != CUBLAS_STATUS_SUCCESS) return status;
    const bool host_result = is_reduction(r.op) && handle->pointer_mode == CUBLAS_POINTER_MODE_HOST;
    // Quick returns of the reference BLAS: an empty problem does nothing (a reduction returns 0).
    const bool level2 = r.op == VectorOp::Gemv || r.op == VectorOp::Ger;
    if ((level2 && (r.m == 0 || r.n == 0)) || (!level2 && r.n <= 0) ||
        (is_reduction(r.op) && r.op != VectorOp::Dot && r.incx <= 0)) {
        if (host_result) zero_result(r);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (r.op != VectorOp::Copy && !is_reduction(r.op) && r.alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (r.op == VectorOp::Gemv && r.beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;

    TbdsimVectorParams params{};
    params.x = r.x;
    params.y = r.y;
    params.a = r.a;
    params.result = host_result ? nullptr : r.result;
    params.m = r.m;
    params.n = r.n;
    params.incx = r.incx;
    params.incy = r.incy;
    params.lda = r.lda;
    params.pointer_mode = handle->pointer_mode;
    params.trans = r.trans;
    params.conjugate = r.conjugate ? 1 : 0;
    if (handle->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
        read_scalar(r.alpha, r.type, r.real_scalar, params.alpha_re, params.alpha_im);
        read_scalar(r.beta, r.type, false, params.beta_re, params.beta_im);
    } else {
        params.alpha_ptr = r.alpha;
        params.beta_ptr = r.beta;
    }
    CUfunction function = nullptr;
    if (vector_kernel(handle, r, &function) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
    const int64_t work = level2 ? std::max(r.m, r.n) : r.n;
    const auto blocks = static_cast<unsigned>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
    const blas::DriverEntryPoints& driver = *handle->driver;
    if (driver.private_api != nullptr)
        driver.private_api->annotate_next_launch(vector_flops(r),
                                                 is_double(r.type) ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32);
    void* arguments[] = {&params};
    if (driver.launch_kernel(function, blocks, 1, 1, kThreads, 1, 1, 0, handle->stream, arguments, nullptr) !=
        CUDA_SUCCESS)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (host_result) {
        if (driver.stream_synchronize(handle->stream) != CUDA_SUCCESS) return CUBLAS_STATUS_EXECUTION_FAILED;
        reduce_on_host(r);
    }
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace tbdsim::cublas
