// Local response normalization across channels and divisive normalization (cudnn_ops_v9.h): the LRN
// descriptor (defaults and limits from the header: n 5, alpha 1e-4, beta 0.75, k 2; n in [1, 16],
// k >= 1e-5, beta >= 0.01) and the four passes, each one element-wise kernel over its output, timed as
// a roofline (FLOPs: dnn_flops.h).
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnLRNStruct {
    unsigned n = 5;
    double alpha = 1e-4, beta = 0.75, k = 2.0;
};

namespace {

struct Pass {
    int kernel;
    double flops;
    double bytes;  // every tensor the pass reads or writes, once
};

cudnnStatus_t run_pass(cudnnHandle_t handle, const cudnnTensorStruct* out_desc, const void* in, const void* second,
                       void* out, const void* alpha, const void* beta, const Pass& pass) {
    dnn::Elementwise work;
    work.kernel = pass.kernel;
    work.out = out_desc;
    work.flops = pass.flops;
    work.bytes = pass.bytes;
    work.params = {in,
                   second,
                   out,
                   nullptr,
                   0,
                   0,
                   dnn::read_scalar(alpha, out_desc->type),
                   dnn::read_scalar(beta, out_desc->type),
                   0,
                   0,
                   nullptr,
                   {}};
    return dnn::run_elementwise(handle, work);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateLRNDescriptor(cudnnLRNDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnLRNStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyLRNDescriptor(cudnnLRNDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetLRNDescriptor(cudnnLRNDescriptor_t d, unsigned n, double alpha, double beta,
                                               double k) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (n < CUDNN_LRN_MIN_N || n > CUDNN_LRN_MAX_N || k < CUDNN_LRN_MIN_K || beta < CUDNN_LRN_MIN_BETA) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "LRN: n in [1, 16], k >= 1e-5, beta >= 0.01");
    }
    *d = {n, alpha, beta, k};
    return CUDNN_STATUS_SUCCESS;
}

// Any output may be NULL (not wanted), as the header says.
TBD_EXPORT cudnnStatus_t cudnnGetLRNDescriptor(cudnnLRNDescriptor_t d, unsigned* n, double* alpha, double* beta,
                                               double* k) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (n != nullptr) *n = d->n;
    if (alpha != nullptr) *alpha = d->alpha;
    if (beta != nullptr) *beta = d->beta;
    if (k != nullptr) *k = d->k;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t d, cudnnLRNMode_t mode,
                                                     const void* alpha, const cudnnTensorDescriptor_t x_desc,
                                                     const void* x, const void* beta,
                                                     const cudnnTensorDescriptor_t y_desc, void* y) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || mode != CUDNN_LRN_CROSS_CHANNEL_DIM1 || alpha == nullptr || beta == nullptr || x == nullptr ||
        y == nullptr || !dnn::same_dims(x_desc, y_desc)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "LRN forward: arguments");
    }
    const int64_t elements = dnn::element_count(*y_desc);
    return run_pass(handle, y_desc, x, nullptr, y, alpha, beta,
                    {dnn::kLrnForward, dnn::lrn_flops(false, d->n, elements), 2 * dnn::tensor_bytes(*y_desc)});
}

TBD_EXPORT cudnnStatus_t cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t d, cudnnLRNMode_t mode,
                                                      const void* alpha, const cudnnTensorDescriptor_t y_desc,
                                                      const void* y, const cudnnTensorDescriptor_t dy_desc,
                                                      const void* dy, const cudnnTensorDescriptor_t x_desc,
                                                      const void* x, const void* beta,
                                                      const cudnnTensorDescriptor_t dx_desc, void* dx) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || mode != CUDNN_LRN_CROSS_CHANNEL_DIM1 || alpha == nullptr || beta == nullptr || y == nullptr ||
        dy == nullptr || x == nullptr || dx == nullptr || !dnn::same_dims(y_desc, dy_desc) ||
        !dnn::same_dims(x_desc, dx_desc) || !dnn::same_dims(y_desc, dx_desc)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "LRN backward: arguments");
    }
    const int64_t elements = dnn::element_count(*dx_desc);
    return run_pass(handle, dx_desc, dy, x, dx, alpha, beta,
                    {dnn::kLrnBackward, dnn::lrn_flops(true, d->n, elements), 4 * dnn::tensor_bytes(*dx_desc)});
}

// temp and temp2 are the caller's scratch, shaped as x (as the header says); means may be NULL (zero).
TBD_EXPORT cudnnStatus_t cudnnDivisiveNormalizationForward(cudnnHandle_t handle, cudnnLRNDescriptor_t d,
                                                           cudnnDivNormMode_t mode, const void* alpha,
                                                           const cudnnTensorDescriptor_t x_desc, const void* x,
                                                           const void* means, void* temp, void* temp2, const void* beta,
                                                           const cudnnTensorDescriptor_t y_desc, void* y) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || mode != CUDNN_DIVNORM_PRECOMPUTED_MEANS || alpha == nullptr || beta == nullptr ||
        x == nullptr || y == nullptr || temp == nullptr || temp2 == nullptr || !dnn::same_dims(x_desc, y_desc) ||
        x_desc->dims != 4) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "divisive normalization forward: arguments (4-d tensors)");
    }
    const int64_t elements = dnn::element_count(*y_desc);
    const double tensor = dnn::tensor_bytes(*y_desc);
    return run_pass(handle, y_desc, x, means, y, alpha, beta,
                    {dnn::kDivisiveNormForward, dnn::divisive_normalization_flops(false, d->n, elements),
                     tensor * (means != nullptr ? 6 : 5)});  // x, (means), temp and temp2 written and read, y
}

TBD_EXPORT cudnnStatus_t cudnnDivisiveNormalizationBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t d,
                                                            cudnnDivNormMode_t mode, const void* alpha,
                                                            const cudnnTensorDescriptor_t x_desc, const void* x,
                                                            const void* means, const void* dy, void* temp, void* temp2,
                                                            const void* beta, const cudnnTensorDescriptor_t dx_desc,
                                                            void* dx, void* dmeans) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || mode != CUDNN_DIVNORM_PRECOMPUTED_MEANS || alpha == nullptr || beta == nullptr ||
        x == nullptr || dy == nullptr || dx == nullptr || temp == nullptr || temp2 == nullptr ||
        !dnn::same_dims(x_desc, dx_desc) || x_desc->dims != 4) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "divisive normalization backward: arguments (4-d tensors)");
    }
    const int64_t elements = dnn::element_count(*dx_desc);
    const double tensor = dnn::tensor_bytes(*dx_desc);
    return run_pass(handle, dx_desc, dy, x, dx, alpha, beta,
                    {dnn::kDivisiveNormBackward, dnn::divisive_normalization_flops(true, d->n, elements),
                     tensor * (7 + (means != nullptr ? 1 : 0) + (dmeans != nullptr ? 1 : 0))});
}
