// Convolutions: shapes, algorithm queries (Get_v7 / Find / FindEx answer from the cost model, best
// first), workspace sizes, forward, backward data, backward filter and bias gradient. Supported
// algorithms: forward IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM and GEMM; backward data ALGO_0/ALGO_1;
// backward filter ALGO_0/ALGO_1. Others are listed by the queries with CUDNN_STATUS_NOT_SUPPORTED
// and refused by the compute calls, as real cuDNN does for an algorithm a problem cannot use.
#include <algorithm>
#include <cmath>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace tbdsim::dnn {

cudnnStatus_t convolution_output(const cudnnConvolutionStruct& conv, const cudnnTensorStruct& x,
                                 const cudnnFilterStruct& w, int* dims_out, int* out) {
    if (!conv.set || !x.set || !w.set) return fail(CUDNN_STATUS_BAD_PARAM, "convolution: descriptor not set");
    if (x.dims != w.dims || x.dims != conv.spatial + 2) {
        return fail(CUDNN_STATUS_BAD_PARAM, "convolution: input, filter and convolution dimensions differ");
    }
    if (x.dim[1] % conv.groups != 0 || w.dim[0] % conv.groups != 0 || w.dim[1] * conv.groups != x.dim[1]) {
        return fail(CUDNN_STATUS_BAD_PARAM, "convolution: channels do not match the filter and group count");
    }
    out[0] = x.dim[0];
    out[1] = w.dim[0];
    for (int i = 0; i < conv.spatial; ++i) {
        const int extent = (w.dim[i + 2] - 1) * conv.dilation[i] + 1;
        const int size = x.dim[i + 2] + 2 * conv.pad[i] - extent;
        if (size < 0) return fail(CUDNN_STATUS_BAD_PARAM, "convolution: filter larger than the padded input");
        out[i + 2] = 1 + size / conv.stride[i];
    }
    *dims_out = x.dims;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t convolution_shape(const cudnnConvolutionStruct* conv, const cudnnTensorStruct* x,
                                const cudnnFilterStruct* w, const cudnnTensorStruct* y, ConvShape* shape) {
    if (conv == nullptr || x == nullptr || w == nullptr || y == nullptr) {
        return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "convolution: null descriptor");
    }
    int dims = 0;
    int out[kMaxDims] = {};
    if (const cudnnStatus_t s = convolution_output(*conv, *x, *w, &dims, out); s != CUDNN_STATUS_SUCCESS) return s;
    if (!y->set || y->dims != dims) return fail(CUDNN_STATUS_BAD_PARAM, "convolution: output descriptor");
    for (int i = 0; i < dims; ++i) {
        if (y->dim[i] != out[i]) return fail(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH, "convolution: output dims");
    }
    if (x->type != w->type || x->type != y->type) {
        return fail(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE, "convolution: mixed data types");
    }
    shape->n = x->dim[0];
    shape->c = x->dim[1];
    shape->k = w->dim[0];
    shape->groups = conv->groups;
    shape->filter_spatial = 1;
    shape->output_spatial = 1;
    for (int i = 2; i < dims; ++i) {
        shape->filter_spatial *= w->dim[i];
        shape->output_spatial *= out[i];
    }
    shape->type = x->type;
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace tbdsim::dnn

namespace {

enum class Pass { Forward, BackwardData, BackwardFilter };

// Workspace per algorithm (bytes), 0 for those that need none; -1: not supported.
int64_t workspace_of(Pass pass, int algo, const dnn::ConvShape& s) {
    const int64_t reduction = s.c / s.groups * s.filter_spatial;  // C/g * R * S
    const int64_t bytes = static_cast<int64_t>(dnn::element_bytes(s.type));
    switch (pass) {
        case Pass::Forward:
            if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) return 0;
            if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) return reduction * 8;        // index table
            if (algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM) return reduction * s.output_spatial * bytes;  // im2col
            return -1;
        case Pass::BackwardData:
            if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) return 0;
            if (algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1) return s.k / s.groups * s.filter_spatial * 8;
            return -1;
        case Pass::BackwardFilter:
            if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0) return 0;
            if (algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1) return s.k * reduction * 4;  // split-K partial sums
            return -1;
    }
    return -1;
}

int algorithm_count(Pass pass) {
    switch (pass) {
        case Pass::Forward:
            return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
        case Pass::BackwardData:
            return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
        case Pass::BackwardFilter:
            return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    }
    return 0;
}

// The supported algorithms in the order the queries rank them (fastest first in the cost model:
// the ones with a workspace save index arithmetic and are modelled as 10% faster).
constexpr int kForwardOrder[] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_GEMM};
constexpr int kBackwardDataOrder[] = {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0};
constexpr int kBackwardFilterOrder[] = {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0};

double peak_flops_per_ms(TbdsimPrecision precision) {
    const double fp32 = 66.9e9;  // FLOP per ms of the default simulated device (H100 SXM)
    switch (precision) {
        case TBDSIM_PRECISION_TF32:
            return fp32 * 7.5;
        case TBDSIM_PRECISION_FP16:
        case TBDSIM_PRECISION_BF16:
            return fp32 * 15;
        case TBDSIM_PRECISION_FP64:
            return fp32 * 0.5;
        default:
            return fp32;
    }
}

template <typename Perf>
void fill_perf(cudnnHandle_t handle, Pass pass, const dnn::ConvShape& shape, cudnnMathType_t math, int requested,
               int* returned, Perf* results) {
    const int* order = pass == Pass::Forward        ? kForwardOrder
                       : pass == Pass::BackwardData ? kBackwardDataOrder
                                                    : kBackwardFilterOrder;
    const int supported = pass == Pass::Forward ? 3 : 2;
    const TbdsimPrecision precision = dnn::convolution_precision(handle, shape.type, math);
    const double base_ms = std::max(0.002, shape.flops() / peak_flops_per_ms(precision));
    int written = 0;
    for (int i = 0; i < supported && written < requested; ++i, ++written) {
        Perf& p = results[written];
        p = Perf{};
        p.algo = static_cast<decltype(p.algo)>(order[i]);
        p.status = CUDNN_STATUS_SUCCESS;
        p.memory = static_cast<size_t>(workspace_of(pass, order[i], shape));
        p.time = static_cast<float>(p.memory > 0 ? base_ms * 0.9 : base_ms);
        p.determinism = CUDNN_DETERMINISTIC;
        p.mathType = precision == TBDSIM_PRECISION_FP32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    }
    for (int algo = 0; algo < algorithm_count(pass) && written < requested; ++algo) {
        if (workspace_of(pass, algo, shape) >= 0) continue;
        Perf& p = results[written++];
        p = Perf{};
        p.algo = static_cast<decltype(p.algo)>(algo);
        p.status = CUDNN_STATUS_NOT_SUPPORTED;
        p.time = -1;
    }
    *returned = written;
}

struct ConvCall {
    Pass pass;
    int algo;
    const void* in;      // x (forward, filter) or dy (data)
    const void* second;  // w (forward, data) or dy (filter)
    void* out;
    void* workspace;
    size_t workspace_bytes;
    const void* alpha;
    const void* beta;
    // cudnnConvolutionBiasActivationForward only: the epilogue's FLOPs, and the bytes the call moves
    // (> 0 makes the duration a roofline).
    double epilogue_flops = 0;
    double bytes = 0;
};

cudnnStatus_t run_convolution(cudnnHandle_t handle, const cudnnConvolutionStruct& conv, const dnn::ConvShape& shape,
                              const ConvCall& call) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (call.alpha == nullptr || call.beta == nullptr || call.in == nullptr || call.second == nullptr ||
        call.out == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "convolution: null pointer argument");
    }
    const int64_t needed = workspace_of(call.pass, call.algo, shape);
    if (needed < 0) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "convolution: algorithm not supported");
    if (static_cast<size_t>(needed) > call.workspace_bytes || (needed > 0 && call.workspace == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "convolution: workspace too small for the algorithm");
    }
    const TbdsimPrecision precision = dnn::convolution_precision(handle, shape.type, conv.math);
    const bool tensor_cores = precision != TBDSIM_PRECISION_FP32 && precision != TBDSIM_PRECISION_FP64;
    dnn::Launch launch;
    switch (call.pass) {
        case Pass::Forward:
            launch.kernel = tensor_cores                                                    ? dnn::kConvFwdTf32
                            : call.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ? dnn::kConvFwdPrecomp
                            : call.algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM                  ? dnn::kConvFwdGemm
                                                                                            : dnn::kConvFwdImplicit;
            break;
        case Pass::BackwardData:
            launch.kernel = tensor_cores                                     ? dnn::kConvBwdDataTf32
                            : call.algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1 ? dnn::kConvBwdData1
                                                                             : dnn::kConvBwdData0;
            break;
        case Pass::BackwardFilter:
            launch.kernel = tensor_cores                                       ? dnn::kConvBwdFilterTf32
                            : call.algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ? dnn::kConvBwdFilter1
                                                                               : dnn::kConvBwdFilter0;
            break;
    }
    // Implicit GEMM tiles of 128 x 128 over the output (rows: N*P*Q or the filter, columns: K).
    const int64_t rows = call.pass == Pass::BackwardFilter ? shape.c / shape.groups * shape.filter_spatial
                                                           : shape.n * shape.output_spatial;
    const int64_t columns = call.pass == Pass::BackwardData ? shape.c / shape.groups : shape.k / shape.groups;
    launch.grid_x = static_cast<unsigned>(std::max<int64_t>(1, (rows + 127) / 128));
    launch.grid_y = static_cast<unsigned>(std::max<int64_t>(1, (columns + 127) / 128));
    launch.grid_z = static_cast<unsigned>(shape.groups);
    launch.flops = shape.flops() + call.epilogue_flops;
    launch.bytes = call.bytes;
    launch.precision = precision;
    launch.params.x = call.in;
    launch.params.w = call.second;
    launch.params.y = call.out;
    launch.params.workspace = call.workspace;
    launch.params.workspace_bytes = call.workspace_bytes;
    launch.params.alpha = dnn::read_scalar(call.alpha, shape.type);
    launch.params.beta = dnn::read_scalar(call.beta, shape.type);
    return dnn::run(handle, launch);
}

template <typename Algo>
cudnnStatus_t workspace_query(Pass pass, const cudnnConvolutionStruct* conv, const cudnnTensorStruct* x,
                              const cudnnFilterStruct* w, const cudnnTensorStruct* y, Algo algo, size_t* size) {
    if (size == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    dnn::ConvShape shape;
    if (const cudnnStatus_t s = dnn::convolution_shape(conv, x, w, y, &shape); s != CUDNN_STATUS_SUCCESS) return s;
    const int64_t bytes = workspace_of(pass, static_cast<int>(algo), shape);
    if (bytes < 0) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "convolution: algorithm not supported");
    *size = static_cast<size_t>(bytes);
    return CUDNN_STATUS_SUCCESS;
}

template <typename Perf>
cudnnStatus_t algorithm_query(cudnnHandle_t handle, Pass pass, const cudnnConvolutionStruct* conv,
                              const cudnnTensorStruct* x, const cudnnFilterStruct* w, const cudnnTensorStruct* y,
                              int requested, int* returned, Perf* results) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (returned == nullptr || results == nullptr || requested < 1) return CUDNN_STATUS_BAD_PARAM;
    dnn::ConvShape shape;
    if (const cudnnStatus_t s = dnn::convolution_shape(conv, x, w, y, &shape); s != CUDNN_STATUS_SUCCESS) return s;
    fill_perf(handle, pass, shape, conv->math, requested, returned, results);
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t, int* count) {
    if (count == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *count = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}
TBD_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t, int* count) {
    if (count == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *count = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}
TBD_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t, int* count) {
    if (count == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *count = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t x,
                                                                const cudnnFilterDescriptor_t w,
                                                                const cudnnConvolutionDescriptor_t conv,
                                                                const cudnnTensorDescriptor_t y, const int requested,
                                                                int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
    return algorithm_query(handle, Pass::Forward, conv, x, w, y, requested, returned, results);
}

// Find measures nothing here: the answer is the cost model's, so it equals Get_v7's (documented).
TBD_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t x,
                                                              const cudnnFilterDescriptor_t w,
                                                              const cudnnConvolutionDescriptor_t conv,
                                                              const cudnnTensorDescriptor_t y, const int requested,
                                                              int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
    return algorithm_query(handle, Pass::Forward, conv, x, w, y, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle, const cudnnTensorDescriptor_t x,
                                                                const void*, const cudnnFilterDescriptor_t w,
                                                                const void*, const cudnnConvolutionDescriptor_t conv,
                                                                const cudnnTensorDescriptor_t y, void*,
                                                                const int requested, int* returned,
                                                                cudnnConvolutionFwdAlgoPerf_t* results, void*, size_t) {
    return algorithm_query(handle, Pass::Forward, conv, x, w, y, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* results) {
    return algorithm_query(handle, Pass::BackwardData, conv, dx, w, dy, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* results) {
    return algorithm_query(handle, Pass::BackwardData, conv, dx, w, dy, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const void*, const cudnnTensorDescriptor_t dy, const void*,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx, void*, const int requested,
    int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results, void*, size_t) {
    return algorithm_query(handle, Pass::BackwardData, conv, dx, w, dy, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* results) {
    return algorithm_query(handle, Pass::BackwardFilter, conv, x, dw, dy, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* results) {
    return algorithm_query(handle, Pass::BackwardFilter, conv, x, dw, dy, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const void*, const cudnnTensorDescriptor_t dy, const void*,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw, void*, const int requested,
    int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* results, void*, size_t) {
    return algorithm_query(handle, Pass::BackwardFilter, conv, x, dw, dy, requested, returned, results);
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                                 const cudnnFilterDescriptor_t w,
                                                                 const cudnnConvolutionDescriptor_t conv,
                                                                 const cudnnTensorDescriptor_t y,
                                                                 cudnnConvolutionFwdAlgo_t algo, size_t* size) {
    return workspace_query(Pass::Forward, conv, x, w, y, algo, size);
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t, const cudnnFilterDescriptor_t w,
                                                                      const cudnnTensorDescriptor_t dy,
                                                                      const cudnnConvolutionDescriptor_t conv,
                                                                      const cudnnTensorDescriptor_t dx,
                                                                      cudnnConvolutionBwdDataAlgo_t algo,
                                                                      size_t* size) {
    return workspace_query(Pass::BackwardData, conv, dx, w, dy, algo, size);
}

TBD_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t x,
                                                                        const cudnnTensorDescriptor_t dy,
                                                                        const cudnnConvolutionDescriptor_t conv,
                                                                        const cudnnFilterDescriptor_t dw,
                                                                        cudnnConvolutionBwdFilterAlgo_t algo,
                                                                        size_t* size) {
    return workspace_query(Pass::BackwardFilter, conv, x, dw, dy, algo, size);
}

TBD_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                                 const cudnnTensorDescriptor_t x_desc, const void* x,
                                                 const cudnnFilterDescriptor_t w_desc, const void* w,
                                                 const cudnnConvolutionDescriptor_t conv,
                                                 cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                                 size_t workspace_bytes, const void* beta,
                                                 const cudnnTensorDescriptor_t y_desc, void* y) {
    dnn::ConvShape shape;
    if (const cudnnStatus_t s = dnn::convolution_shape(conv, x_desc, w_desc, y_desc, &shape);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    return run_convolution(handle, *conv, shape,
                           {Pass::Forward, algo, x, w, y, workspace, workspace_bytes, alpha, beta});
}

TBD_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                                      const cudnnFilterDescriptor_t w_desc, const void* w,
                                                      const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                      const cudnnConvolutionDescriptor_t conv,
                                                      cudnnConvolutionBwdDataAlgo_t algo, void* workspace,
                                                      size_t workspace_bytes, const void* beta,
                                                      const cudnnTensorDescriptor_t dx_desc, void* dx) {
    dnn::ConvShape shape;
    if (const cudnnStatus_t s = dnn::convolution_shape(conv, dx_desc, w_desc, dy_desc, &shape);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    return run_convolution(handle, *conv, shape,
                           {Pass::BackwardData, algo, dy, w, dx, workspace, workspace_bytes, alpha, beta});
}

TBD_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                                        const cudnnTensorDescriptor_t x_desc, const void* x,
                                                        const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                        const cudnnConvolutionDescriptor_t conv,
                                                        cudnnConvolutionBwdFilterAlgo_t algo, void* workspace,
                                                        size_t workspace_bytes, const void* beta,
                                                        const cudnnFilterDescriptor_t dw_desc, void* dw) {
    dnn::ConvShape shape;
    if (const cudnnStatus_t s = dnn::convolution_shape(conv, x_desc, dw_desc, dy_desc, &shape);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    return run_convolution(handle, *conv, shape,
                           {Pass::BackwardFilter, algo, x, dy, dw, workspace, workspace_bytes, alpha, beta});
}

namespace {

// What cuDNN documents for the fused call's extra operands: z shaped as y, the bias 1 x K x 1 x 1 (as
// many dims as y), the activation RELU, or IDENTITY with IMPLICIT_PRECOMP_GEMM only.
cudnnStatus_t check_bias_activation(const cudnnTensorStruct* y, const cudnnTensorStruct* z,
                                    const cudnnTensorStruct* bias, const cudnnActivationStruct* activation, int algo) {
    if (z == nullptr || bias == nullptr || activation == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "bias activation: null descriptor");
    }
    if (!z->set || z->dims != y->dims || z->type != y->type || z->dim != y->dim) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "bias activation: z must have y's shape and type");
    }
    bool bias_fits = bias->set && bias->dims == y->dims && bias->dim[1] == y->dim[1];
    for (int i = 0; bias_fits && i < bias->dims; ++i) bias_fits = i == 1 || bias->dim[i] == 1;
    if (!bias_fits) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "bias activation: the bias must be 1 x K x 1 x 1");
    if (!activation->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "bias activation: activation descriptor not set");
    if (activation->mode != CUDNN_ACTIVATION_RELU && activation->mode != CUDNN_ACTIVATION_IDENTITY) {
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "bias activation: only RELU and IDENTITY activations");
    }
    if (activation->mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED,
                         "bias activation: IDENTITY needs CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
    }
    return CUDNN_STATUS_SUCCESS;
}

// Each operand read or written once: x, w, z (unless alpha2 is 0: cuDNN does not read it then), the
// bias and y.
double bias_activation_bytes(const cudnnTensorStruct& x, const cudnnFilterStruct& w, const cudnnTensorStruct& y,
                             bool reads_z) {
    int64_t filter = 1;
    for (int i = 0; i < w.dims; ++i) filter *= w.dim[i];
    const int64_t output = dnn::element_count(y);
    const int64_t elements = dnn::element_count(x) + filter + output * (reads_z ? 2 : 1) + y.dim[1];
    return static_cast<double>(elements) * static_cast<double>(dnn::element_bytes(y.type));
}

}  // namespace

// y = act(alpha1 * conv(x, w) + alpha2 * z + bias), one kernel: the forward convolution with the
// scaling, z, bias and activation as its epilogue (docs/simgpu-cudnn.md).
TBD_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void* alpha1, const cudnnTensorDescriptor_t x_desc, const void* x,
    const cudnnFilterDescriptor_t w_desc, const void* w, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t workspace_bytes, const void* alpha2,
    const cudnnTensorDescriptor_t z_desc, const void* z, const cudnnTensorDescriptor_t bias_desc, const void* bias,
    const cudnnActivationDescriptor_t activation, const cudnnTensorDescriptor_t y_desc, void* y) {
    dnn::ConvShape shape;
    if (const cudnnStatus_t s = dnn::convolution_shape(conv, x_desc, w_desc, y_desc, &shape);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (const cudnnStatus_t s = check_bias_activation(y_desc, z_desc, bias_desc, activation, algo);
        s != CUDNN_STATUS_SUCCESS) {
        return s;
    }
    if (alpha2 == nullptr || bias == nullptr || (z == nullptr && dnn::read_scalar(alpha2, shape.type) != 0)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "bias activation: null pointer argument");
    }
    const bool reads_z = dnn::read_scalar(alpha2, shape.type) != 0;
    const int64_t outputs = dnn::element_count(*y_desc);
    ConvCall call{Pass::Forward, algo, x, w, y, workspace, workspace_bytes, alpha1, alpha2};
    call.epilogue_flops = dnn::convolution_bias_activation_flops(0, activation->mode, outputs);
    call.bytes = bias_activation_bytes(*x_desc, *w_desc, *y_desc, reads_z);
    return run_convolution(handle, *conv, shape, call);
}

// db[k] = sum of dy over N and the spatial dims: one add per element of dy.
TBD_EXPORT cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                                      const cudnnTensorDescriptor_t dy_desc, const void* dy,
                                                      const void* beta, const cudnnTensorDescriptor_t db_desc,
                                                      void* db) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (dy_desc == nullptr || db_desc == nullptr || !dy_desc->set || !db_desc->set || dy == nullptr || db == nullptr ||
        alpha == nullptr || beta == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (db_desc->dim[1] != dy_desc->dim[1]) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "bias gradient: channel count");
    dnn::Launch launch;
    launch.kernel = dnn::kBiasGrad;
    const int64_t elements = dnn::element_count(*dy_desc);
    launch.grid_x = static_cast<unsigned>(dy_desc->dim[1]);
    launch.flops = dnn::bias_gradient_flops(elements);
    launch.params = {dy,
                     nullptr,
                     db,
                     nullptr,
                     0,
                     elements,
                     dnn::read_scalar(alpha, dy_desc->type),
                     dnn::read_scalar(beta, dy_desc->type),
                     0,
                     0,
                     nullptr,
                     {}};
    return dnn::run(handle, launch);
}
