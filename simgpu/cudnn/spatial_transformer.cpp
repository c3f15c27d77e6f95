// Spatial transformer (cudnn_ops_v9.h): the descriptor (bilinear sampler, output dims [N, C, H, W]),
// the affine grid generator (theta [N, 2, 3] -> grid [N, H, W, 2]) and the bilinear sampler, forward
// and backward, one kernel each timed as a roofline (FLOPs: dnn_flops.h spatial_transformer_flops).
#include <new>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnSpatialTransformerStruct {
    cudnnSamplerType_t sampler = CUDNN_SAMPLER_BILINEAR;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    int dim[4] = {0, 0, 0, 0};  // N, C, H, W of the output
    bool set = false;
};

namespace {

constexpr int kThetaElements = 6;  // a 2 x 3 affine matrix per image

int64_t grid_points(const cudnnSpatialTransformerStruct& st) {
    return static_cast<int64_t>(st.dim[0]) * st.dim[2] * st.dim[3];
}

cudnnStatus_t check_descriptor(cudnnHandle_t handle, const cudnnSpatialTransformerStruct* st) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (st == nullptr || !st->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: descriptor not set");
    return CUDNN_STATUS_SUCCESS;
}

// x: the same N and C as the output, any H and W; y (or dy): the descriptor's dims; its data type.
cudnnStatus_t check_tensors(const cudnnSpatialTransformerStruct& st, const cudnnTensorStruct* x,
                            const cudnnTensorStruct* y) {
    if (x == nullptr || y == nullptr || !x->set || !y->set || x->dims != 4 || y->dims != 4) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: 4-d x and y descriptors expected");
    }
    for (int i = 0; i < 4; ++i) {
        if (y->dim[i] != st.dim[i] || (i < 2 && x->dim[i] != st.dim[i])) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: x or y does not fit the descriptor");
        }
    }
    if (x->type != st.type || y->type != st.type) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: data type differs from the descriptor's");
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t run_st(cudnnHandle_t handle, const cudnnSpatialTransformerStruct& st, int kernel, dnn::SpatialTfPass pass,
                     int64_t elements, double bytes, const void* in, void* out) {
    dnn::Launch launch;
    launch.kernel = kernel;
    launch.grid_x = dnn::blocks_for(elements > 0 ? elements : grid_points(st), 256);
    launch.flops = dnn::spatial_transformer_flops(pass, elements, grid_points(st));
    launch.bytes = bytes;
    launch.precision = st.type == CUDNN_DATA_DOUBLE ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32;
    launch.params = {in, nullptr, out, nullptr, 0, elements, 1, 0, 0, 0, nullptr, {}};
    return dnn::run(handle, launch);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateSpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t* st) {
    if (st == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *st = new (std::nothrow) cudnnSpatialTransformerStruct;
    return *st != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroySpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t st) {
    delete st;
    return CUDNN_STATUS_SUCCESS;
}

// 2-d transformations only (4 dims), the bilinear sampler, HALF, FLOAT or DOUBLE data.
TBD_EXPORT cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t st,
                                                                cudnnSamplerType_t sampler, cudnnDataType_t type,
                                                                const int dims, const int dim[]) {
    if (st == nullptr || dim == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (sampler != CUDNN_SAMPLER_BILINEAR) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: sampler");
    if (dims > 4) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "spatial transformer: 2-d transformations only");
    if (dims != 4) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: 4 dims [N, C, H, W] expected");
    if (type != CUDNN_DATA_HALF && type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_DOUBLE) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: HALF, FLOAT or DOUBLE data");
    }
    for (int i = 0; i < dims; ++i) {
        if (dim[i] <= 0) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer: dims must be positive");
    }
    st->sampler = sampler;
    st->type = type;
    for (int i = 0; i < dims; ++i) st->dim[i] = dim[i];
    st->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorForward(cudnnHandle_t handle,
                                                            const cudnnSpatialTransformerDescriptor_t st,
                                                            const void* theta, void* grid) {
    if (const cudnnStatus_t s = check_descriptor(handle, st); s != CUDNN_STATUS_SUCCESS) return s;
    if (theta == nullptr || grid == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const double element = static_cast<double>(dnn::element_bytes(st->type));
    const double bytes =
        element * (kThetaElements * static_cast<double>(st->dim[0]) + 2.0 * static_cast<double>(grid_points(*st)));
    return run_st(handle, *st, dnn::kSpatialTfGridForward, dnn::SpatialTfPass::GridForward, 0, bytes, theta, grid);
}

TBD_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t handle,
                                                             const cudnnSpatialTransformerDescriptor_t st,
                                                             const void* dgrid, void* dtheta) {
    if (const cudnnStatus_t s = check_descriptor(handle, st); s != CUDNN_STATUS_SUCCESS) return s;
    if (dgrid == nullptr || dtheta == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const double element = static_cast<double>(dnn::element_bytes(st->type));
    const double bytes =
        element * (kThetaElements * static_cast<double>(st->dim[0]) + 2.0 * static_cast<double>(grid_points(*st)));
    return run_st(handle, *st, dnn::kSpatialTfGridBackward, dnn::SpatialTfPass::GridBackward, 0, bytes, dgrid, dtheta);
}

TBD_EXPORT cudnnStatus_t cudnnSpatialTfSamplerForward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t st,
                                                      const void* alpha, const cudnnTensorDescriptor_t x_desc,
                                                      const void* x, const void* grid, const void* beta,
                                                      cudnnTensorDescriptor_t y_desc, void* y) {
    if (const cudnnStatus_t s = check_descriptor(handle, st); s != CUDNN_STATUS_SUCCESS) return s;
    if (alpha == nullptr || beta == nullptr || x == nullptr || grid == nullptr || y == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "spatial transformer sampler: null argument");
    }
    if (const cudnnStatus_t s = check_tensors(*st, x_desc, y_desc); s != CUDNN_STATUS_SUCCESS) return s;
    const double element = static_cast<double>(dnn::element_bytes(st->type));
    // Four neighbours read per output element (x read once when it fits in cache is not modelled).
    const double bytes = dnn::tensor_bytes(*x_desc) + 2.0 * dnn::tensor_bytes(*y_desc) +
                         2.0 * element * static_cast<double>(grid_points(*st));
    return run_st(handle, *st, dnn::kSpatialTfSamplerForward, dnn::SpatialTfPass::SamplerForward,
                  dnn::element_count(*y_desc), bytes, x, y);
}

TBD_EXPORT cudnnStatus_t cudnnSpatialTfSamplerBackward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t st,
                                                       const void* alpha, const cudnnTensorDescriptor_t x_desc,
                                                       const void* x, const void* beta,
                                                       const cudnnTensorDescriptor_t dx_desc, void* dx,
                                                       const void* alpha_dgrid, const cudnnTensorDescriptor_t dy_desc,
                                                       const void* dy, const void* grid, const void* beta_dgrid,
                                                       void* dgrid) {
    if (const cudnnStatus_t s = check_descriptor(handle, st); s != CUDNN_STATUS_SUCCESS) return s;
    if (alpha == nullptr || beta == nullptr || alpha_dgrid == nullptr || beta_dgrid == nullptr || x == nullptr ||
        dx == nullptr || dy == nullptr || grid == nullptr || dgrid == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "spatial transformer sampler: null argument");
    }
    if (const cudnnStatus_t s = check_tensors(*st, x_desc, dy_desc); s != CUDNN_STATUS_SUCCESS) return s;
    if (!dnn::same_dims(x_desc, dx_desc)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "spatial transformer sampler: dx not shaped as x");
    }
    const double element = static_cast<double>(dnn::element_bytes(st->type));
    const double bytes =
        3.0 * dnn::tensor_bytes(*x_desc) + dnn::tensor_bytes(*dy_desc) +
        4.0 * element * static_cast<double>(grid_points(*st));  // x read, dx read and written; grid and dgrid
    return run_st(handle, *st, dnn::kSpatialTfSamplerBackward, dnn::SpatialTfPass::SamplerBackward,
                  dnn::element_count(*dy_desc), bytes, dy, dx);
}
