// RNNs through cuDNN's v8 API (cudnn_adv_v9.h), as PyTorch's cuDNN RNNs use it: the RNN and RNN-data
// descriptors, the weight space with its per-matrix queries, the temporary-space sizes, forward
// (inference and training), backward data and backward weights. Each pass is one kernel carrying the
// whole pass's FLOPs (dnn_flops.h: rnn_flops), timed as a roofline.
//
// Supported: every cell (RELU, TANH, LSTM, GRU), bias mode and direction mode, CUDNN_LINEAR_INPUT,
// the standard and persistent algorithms (one cost model), no projection (projSize = hiddenSize);
// SKIP_INPUT and LSTM projections answer CUDNN_STATUS_NOT_SUPPORTED. Sizes are this simulator's model
// (docs/simgpu-cudnn.md): the weight space holds, per pseudo-layer (layer x direction), the matrices in
// linLayerID order (input matrices gates x [hidden x layer input], then recurrent ones [hidden x
// hidden]), then the biases present in the same order ([hidden] each); the workspace one layer's gate
// pre-activations for the longest padded batch, the reserve space (training) every layer's gates and
// hidden state (and cell state for LSTM) for it.
#include <new>
#include <vector>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnRNNStruct {
    cudnnRNNAlgo_t algo = CUDNN_RNN_ALGO_STANDARD;
    cudnnRNNMode_t cell = CUDNN_LSTM;
    cudnnRNNBiasMode_t bias = CUDNN_RNN_DOUBLE_BIAS;
    cudnnDirectionMode_t direction = CUDNN_UNIDIRECTIONAL;
    cudnnRNNInputMode_t input_mode = CUDNN_LINEAR_INPUT;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    cudnnDataType_t math_precision = CUDNN_DATA_FLOAT;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    int32_t input = 0, hidden = 0, projection = 0, layers = 0;
    cudnnDropoutDescriptor_t dropout = nullptr;
    uint32_t aux_flags = 0;
    cudnnRNNClipMode_t clip = CUDNN_RNN_CLIP_NONE;
    cudnnNanPropagation_t clip_nan = CUDNN_NOT_PROPAGATE_NAN;
    double lclip = 0, rclip = 0;
    int built_batch = 0;  // cudnnBuildRNNDynamic
    bool set = false;
};

struct cudnnRNNDataStruct {
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    cudnnRNNDataLayout_t layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
    int max_length = 0, batch = 0, vector = 0;
    std::vector<int> lengths;
    double padding = 0;
    bool set = false;
};

namespace {

int directions(const cudnnRNNStruct& r) {
    return r.direction == CUDNN_BIDIRECTIONAL ? 2 : 1;
}

int64_t layer_input(const cudnnRNNStruct& r, int layer) {
    return layer == 0 ? r.input : static_cast<int64_t>(r.hidden) * directions(r);
}

bool bias_present(const cudnnRNNStruct& r, int lin_layer) {
    const int gates = dnn::rnn_gates(r.cell);
    switch (r.bias) {
        case CUDNN_RNN_DOUBLE_BIAS:
            return true;
        case CUDNN_RNN_SINGLE_INP_BIAS:
            return lin_layer < gates;
        case CUDNN_RNN_SINGLE_REC_BIAS:
            return lin_layer >= gates;
        default:
            return false;
    }
}

// Elements of one pseudo-layer's matrices, and of its biases.
int64_t matrix_elements(const cudnnRNNStruct& r, int layer) {
    return dnn::rnn_gates(r.cell) * static_cast<int64_t>(r.hidden) * (layer_input(r, layer) + r.hidden);
}
int64_t bias_elements(const cudnnRNNStruct& r) {
    return static_cast<int64_t>(dnn::rnn_bias_vectors(r.bias)) * dnn::rnn_gates(r.cell) * r.hidden;
}

size_t weight_space_bytes(const cudnnRNNStruct& r) {
    int64_t elements = 0;
    for (int layer = 0; layer < r.layers; ++layer)
        elements += (matrix_elements(r, layer) + bias_elements(r)) * directions(r);
    return static_cast<size_t>(elements) * dnn::element_bytes(r.type);
}

struct TempSizes {
    size_t workspace = 0, reserve = 0;
};

TempSizes temp_sizes(const cudnnRNNStruct& r, cudnnForwardMode_t mode, const cudnnRNNDataStruct& x) {
    const auto padded = static_cast<size_t>(x.max_length) * static_cast<size_t>(x.batch);
    const auto units = static_cast<size_t>(dnn::rnn_gates(r.cell)) * static_cast<size_t>(r.hidden);
    const size_t bytes = dnn::element_bytes(r.type);
    TempSizes sizes;
    sizes.workspace = padded * units * static_cast<size_t>(directions(r)) * bytes;
    if (mode == CUDNN_FWD_MODE_TRAINING) {
        const size_t state = static_cast<size_t>(r.hidden) * (r.cell == CUDNN_LSTM ? 2 : 1);
        sizes.reserve =
            static_cast<size_t>(r.layers) * static_cast<size_t>(directions(r)) * padded * (units + state) * bytes;
    }
    return sizes;
}

int64_t steps_of(const cudnnRNNDataStruct& x) {
    int64_t steps = 0;
    for (const int length : x.lengths) steps += length;
    return steps;
}

dnn::RnnShape shape_of(const cudnnRNNStruct& r, const cudnnRNNDataStruct& x) {
    return {r.cell, r.bias, r.layers, directions(r), r.input, r.hidden, steps_of(x)};
}

// The data descriptors against the RNN: x carries inputSize vectors, y hidden * directions, same batch.
cudnnStatus_t check_data(const cudnnRNNStruct* r, const cudnnRNNDataStruct* x, const cudnnRNNDataStruct* y) {
    if (r == nullptr || !r->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: descriptor not set");
    if (x == nullptr || y == nullptr || !x->set || !y->set) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: data descriptor not set");
    }
    if (x->vector != r->input || y->vector != r->hidden * directions(*r) || x->batch != y->batch ||
        x->max_length != y->max_length || x->type != r->type || y->type != r->type) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: x or y does not match the RNN descriptor");
    }
    return CUDNN_STATUS_SUCCESS;
}

struct Spaces {
    size_t weight_bytes;
    const void* weights;
    size_t workspace_bytes;
    void* workspace;
    size_t reserve_bytes;
    void* reserve;
};

cudnnStatus_t check_spaces(const cudnnRNNStruct& r, cudnnForwardMode_t mode, const cudnnRNNDataStruct& x,
                           const Spaces& s) {
    if (s.weights == nullptr || s.weight_bytes < weight_space_bytes(r)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: weight space smaller than cudnnGetRNNWeightSpaceSize");
    }
    const TempSizes needed = temp_sizes(r, mode, x);
    if (s.workspace_bytes < needed.workspace || (needed.workspace > 0 && s.workspace == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: workspace smaller than cudnnGetRNNTempSpaceSizes");
    }
    if (s.reserve_bytes < needed.reserve || (needed.reserve > 0 && s.reserve == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: reserve space smaller than cudnnGetRNNTempSpaceSizes");
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t run_pass(cudnnHandle_t handle, const cudnnRNNStruct& r, const cudnnRNNDataStruct& x,
                       const cudnnRNNDataStruct& y, dnn::RnnPass pass, const Spaces& s, const void* in, void* out) {
    const dnn::RnnShape shape = shape_of(r, x);
    const double data_bytes = static_cast<double>(dnn::element_bytes(r.type)) * static_cast<double>(x.max_length) *
                              static_cast<double>(x.batch) * static_cast<double>(x.vector + y.vector);
    dnn::Launch launch;
    launch.kernel = pass == dnn::RnnPass::Forward        ? dnn::kRnnForward
                    : pass == dnn::RnnPass::BackwardData ? dnn::kRnnBackwardData
                                                         : dnn::kRnnBackwardWeights;
    launch.grid_x = dnn::blocks_for(shape.steps * dnn::rnn_gates(r.cell) * r.hidden, 256);
    launch.flops = dnn::rnn_flops(pass, shape);
    launch.bytes = data_bytes + static_cast<double>(weight_space_bytes(r) + 2 * s.workspace_bytes + s.reserve_bytes);
    launch.precision = dnn::convolution_precision(handle, r.type, r.math);
    launch.params = {in, s.weights, out, s.workspace, s.workspace_bytes, shape.steps, 1, 0, 0, 0, s.reserve, {}};
    return dnn::run(handle, launch);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnRNNStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t d, cudnnRNNAlgo_t algo, cudnnRNNMode_t cell,
                                                  cudnnRNNBiasMode_t bias, cudnnDirectionMode_t direction,
                                                  cudnnRNNInputMode_t input_mode, cudnnDataType_t type,
                                                  cudnnDataType_t math_precision, cudnnMathType_t math, int32_t input,
                                                  int32_t hidden, int32_t projection, int32_t layers,
                                                  cudnnDropoutDescriptor_t dropout, uint32_t aux_flags) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (algo < CUDNN_RNN_ALGO_STANDARD || algo >= CUDNN_RNN_ALGO_COUNT || cell < CUDNN_RNN_RELU || cell > CUDNN_GRU ||
        bias < CUDNN_RNN_NO_BIAS || bias > CUDNN_RNN_SINGLE_REC_BIAS ||
        (direction != CUDNN_UNIDIRECTIONAL && direction != CUDNN_BIDIRECTIONAL) || input <= 0 || hidden <= 0 ||
        layers <= 0 || dnn::element_bytes(type) == 0) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: invalid descriptor argument");
    }
    if (input_mode != CUDNN_LINEAR_INPUT) return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "rnn: only CUDNN_LINEAR_INPUT");
    if (projection != hidden)
        return dnn::fail(CUDNN_STATUS_NOT_SUPPORTED, "rnn: no projection (projSize = hiddenSize)");
    cudnnRNNStruct r;
    r.algo = algo;
    r.cell = cell;
    r.bias = bias;
    r.direction = direction;
    r.input_mode = input_mode;
    r.type = type;
    r.math_precision = math_precision;
    r.math = math;
    r.input = input;
    r.hidden = hidden;
    r.projection = projection;
    r.layers = layers;
    r.dropout = dropout;
    r.aux_flags = aux_flags;
    r.set = true;
    *d = r;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t d, cudnnRNNAlgo_t* algo, cudnnRNNMode_t* cell,
                                                  cudnnRNNBiasMode_t* bias, cudnnDirectionMode_t* direction,
                                                  cudnnRNNInputMode_t* input_mode, cudnnDataType_t* type,
                                                  cudnnDataType_t* math_precision, cudnnMathType_t* math,
                                                  int32_t* input, int32_t* hidden, int32_t* projection, int32_t* layers,
                                                  cudnnDropoutDescriptor_t* dropout, uint32_t* aux_flags) {
    if (d == nullptr || !d->set) return CUDNN_STATUS_BAD_PARAM;
    // Every output is optional (NULL: not wanted), as cuDNN documents.
    if (algo != nullptr) *algo = d->algo;
    if (cell != nullptr) *cell = d->cell;
    if (bias != nullptr) *bias = d->bias;
    if (direction != nullptr) *direction = d->direction;
    if (input_mode != nullptr) *input_mode = d->input_mode;
    if (type != nullptr) *type = d->type;
    if (math_precision != nullptr) *math_precision = d->math_precision;
    if (math != nullptr) *math = d->math;
    if (input != nullptr) *input = d->input;
    if (hidden != nullptr) *hidden = d->hidden;
    if (projection != nullptr) *projection = d->projection;
    if (layers != nullptr) *layers = d->layers;
    if (dropout != nullptr) *dropout = d->dropout;
    if (aux_flags != nullptr) *aux_flags = d->aux_flags;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnRNNSetClip_v9(cudnnRNNDescriptor_t d, cudnnRNNClipMode_t mode, double lclip,
                                            double rclip) {
    if (d == nullptr || !d->set) return CUDNN_STATUS_BAD_PARAM;
    if (mode == CUDNN_RNN_CLIP_MINMAX && (d->cell != CUDNN_LSTM || lclip > rclip)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: clipping is for LSTM cells, with lclip <= rclip");
    }
    d->clip = mode;
    d->lclip = lclip;
    d->rclip = rclip;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnRNNSetClip_v8(cudnnRNNDescriptor_t d, cudnnRNNClipMode_t mode, cudnnNanPropagation_t nan,
                                            double lclip, double rclip) {
    const cudnnStatus_t status = cudnnRNNSetClip_v9(d, mode, lclip, rclip);
    if (status == CUDNN_STATUS_SUCCESS) d->clip_nan = nan;
    return status;
}

TBD_EXPORT cudnnStatus_t cudnnRNNGetClip_v9(cudnnRNNDescriptor_t d, cudnnRNNClipMode_t* mode, double* lclip,
                                            double* rclip) {
    if (d == nullptr || !d->set || mode == nullptr || lclip == nullptr || rclip == nullptr) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *mode = d->clip;
    *lclip = d->lclip;
    *rclip = d->rclip;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnRNNGetClip_v8(cudnnRNNDescriptor_t d, cudnnRNNClipMode_t* mode,
                                            cudnnNanPropagation_t* nan, double* lclip, double* rclip) {
    if (nan == nullptr) return CUDNN_STATUS_BAD_PARAM;
    const cudnnStatus_t status = cudnnRNNGetClip_v9(d, mode, lclip, rclip);
    if (status == CUDNN_STATUS_SUCCESS) *nan = d->clip_nan;
    return status;
}

// Only the dynamic persistent algorithm is built for a batch size (real cuDNN compiles it with NVRTC;
// here nothing is compiled, the batch size is remembered).
TBD_EXPORT cudnnStatus_t cudnnBuildRNNDynamic(cudnnHandle_t handle, cudnnRNNDescriptor_t d, int batch) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set || batch <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (d->algo != CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: cudnnBuildRNNDynamic needs CUDNN_RNN_ALGO_PERSIST_DYNAMIC");
    }
    d->built_batch = batch;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t handle, cudnnRNNDescriptor_t d, size_t* size) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set || size == nullptr) return CUDNN_STATUS_BAD_PARAM;
    *size = weight_space_bytes(*d);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t handle, cudnnRNNDescriptor_t d,
                                                   cudnnForwardMode_t mode, cudnnRNNDataDescriptor_t x,
                                                   size_t* workspace, size_t* reserve) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set || x == nullptr || !x->set || x->vector != d->input ||
        (mode != CUDNN_FWD_MODE_INFERENCE && mode != CUDNN_FWD_MODE_TRAINING)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: temp space query arguments");
    }
    const TempSizes sizes = temp_sizes(*d, mode, *x);
    if (workspace != nullptr) *workspace = sizes.workspace;
    if (reserve != nullptr) *reserve = sizes.reserve;
    return CUDNN_STATUS_SUCCESS;
}

// Where matrix and bias `lin_layer` of `pseudo_layer` lie in the weight space (layout in the file
// comment); a bias the bias mode leaves out gives NULL. The descriptors become [1, rows, columns] and
// [1, hidden, 1] tensors of the RNN's data type.
TBD_EXPORT cudnnStatus_t cudnnGetRNNWeightParams(cudnnHandle_t handle, cudnnRNNDescriptor_t d, int32_t pseudo_layer,
                                                 size_t weight_bytes, const void* weights, int32_t lin_layer,
                                                 cudnnTensorDescriptor_t m_desc, void** m_addr,
                                                 cudnnTensorDescriptor_t b_desc, void** b_addr) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || !d->set || weights == nullptr || weight_bytes < weight_space_bytes(*d)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: weight params: descriptor or weight space");
    }
    const int gates = dnn::rnn_gates(d->cell);
    if (pseudo_layer < 0 || pseudo_layer >= d->layers * directions(*d) || lin_layer < 0 || lin_layer >= 2 * gates) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn: pseudo-layer or linear layer id out of range");
    }
    const int layer = pseudo_layer / directions(*d);
    int64_t offset = 0;  // elements before this pseudo-layer
    for (int p = 0; p < pseudo_layer; ++p) offset += matrix_elements(*d, p / directions(*d)) + bias_elements(*d);
    const int64_t in = layer_input(*d, layer);
    const int64_t columns = lin_layer < gates ? in : d->hidden;
    const int64_t matrix_offset = lin_layer < gates
                                      ? lin_layer * d->hidden * in
                                      : gates * d->hidden * in + (lin_layer - gates) * d->hidden * d->hidden;
    int64_t bias_index = 0;  // biases present before this one
    for (int id = 0; id < lin_layer; ++id) bias_index += bias_present(*d, id) ? 1 : 0;
    const auto bytes = static_cast<int64_t>(dnn::element_bytes(d->type));
    auto* base = static_cast<char*>(const_cast<void*>(weights));
    if (m_addr != nullptr) *m_addr = base + (offset + matrix_offset) * bytes;
    if (m_desc != nullptr) {
        const int dim[] = {1, d->hidden, static_cast<int>(columns)},
                  stride[] = {d->hidden * static_cast<int>(columns), static_cast<int>(columns), 1};
        if (const cudnnStatus_t s = cudnnSetTensorNdDescriptor(m_desc, d->type, 3, dim, stride);
            s != CUDNN_STATUS_SUCCESS) {
            return s;
        }
    }
    const bool has_bias = bias_present(*d, lin_layer);
    if (b_addr != nullptr) {
        *b_addr = has_bias ? base + (offset + matrix_elements(*d, layer) + bias_index * d->hidden) * bytes : nullptr;
    }
    if (b_desc != nullptr && has_bias) {
        const int dim[] = {1, d->hidden, 1}, stride[] = {d->hidden, 1, 1};
        return cudnnSetTensorNdDescriptor(b_desc, d->type, 3, dim, stride);
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnRNNDataStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, cudnnDataType_t type,
                                                   cudnnRNNDataLayout_t layout, int max_length, int batch, int vector,
                                                   const int lengths[], void* padding) {
    if (d == nullptr || lengths == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (dnn::element_bytes(type) == 0 || max_length <= 0 || batch <= 0 || vector <= 0 ||
        layout < CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED || layout > CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn data: invalid argument");
    }
    for (int i = 0; i < batch; ++i) {
        if (lengths[i] <= 0 || lengths[i] > max_length) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn data: sequence lengths must be in [1, maxSeqLength]");
        }
        // The packed layout wants the sequences sorted longest first.
        if (layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED && i > 0 && lengths[i] > lengths[i - 1]) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "rnn data: packed sequences must be sorted, longest first");
        }
    }
    d->type = type;
    d->layout = layout;
    d->max_length = max_length;
    d->batch = batch;
    d->vector = vector;
    d->lengths.assign(lengths, lengths + batch);
    d->padding = padding != nullptr ? dnn::read_scalar(padding, type) : 0;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, cudnnDataType_t* type,
                                                   cudnnRNNDataLayout_t* layout, int* max_length, int* batch,
                                                   int* vector, int requested, int lengths[], void* padding) {
    if (d == nullptr || !d->set || type == nullptr || layout == nullptr || max_length == nullptr || batch == nullptr ||
        vector == nullptr || (requested > 0 && lengths == nullptr)) {
        return CUDNN_STATUS_BAD_PARAM;
    }
    *type = d->type;
    *layout = d->layout;
    *max_length = d->max_length;
    *batch = d->batch;
    *vector = d->vector;
    for (int i = 0; i < requested && i < d->batch; ++i) lengths[i] = d->lengths[static_cast<size_t>(i)];
    if (padding != nullptr) {
        if (d->type == CUDNN_DATA_DOUBLE) {
            *static_cast<double*>(padding) = d->padding;
        } else if (d->type == CUDNN_DATA_FLOAT) {
            *static_cast<float*>(padding) = static_cast<float>(d->padding);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t d, cudnnForwardMode_t mode,
                                         const int32_t[], cudnnRNNDataDescriptor_t x_desc, const void* x,
                                         cudnnRNNDataDescriptor_t y_desc, void* y, cudnnTensorDescriptor_t, const void*,
                                         void*, cudnnTensorDescriptor_t, const void*, void*, size_t weight_bytes,
                                         const void* weights, size_t workspace_bytes, void* workspace,
                                         size_t reserve_bytes, void* reserve) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (mode != CUDNN_FWD_MODE_INFERENCE && mode != CUDNN_FWD_MODE_TRAINING) return CUDNN_STATUS_BAD_PARAM;
    if (const cudnnStatus_t s = check_data(d, x_desc, y_desc); s != CUDNN_STATUS_SUCCESS) return s;
    if (x == nullptr || y == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "rnn: null x or y");
    const Spaces spaces{weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve};
    if (const cudnnStatus_t s = check_spaces(*d, mode, *x_desc, spaces); s != CUDNN_STATUS_SUCCESS) return s;
    return run_pass(handle, *d, *x_desc, *y_desc, dnn::RnnPass::Forward, spaces, x, y);
}

TBD_EXPORT cudnnStatus_t cudnnRNNBackwardData_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t d, const int32_t[],
                                                 cudnnRNNDataDescriptor_t y_desc, const void* y, const void* dy,
                                                 cudnnRNNDataDescriptor_t x_desc, void* dx, cudnnTensorDescriptor_t,
                                                 const void*, const void*, void*, cudnnTensorDescriptor_t, const void*,
                                                 const void*, void*, size_t weight_bytes, const void* weights,
                                                 size_t workspace_bytes, void* workspace, size_t reserve_bytes,
                                                 void* reserve) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (const cudnnStatus_t s = check_data(d, x_desc, y_desc); s != CUDNN_STATUS_SUCCESS) return s;
    if (y == nullptr || dy == nullptr || dx == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "rnn backward data: null y, dy or dx");
    }
    const Spaces spaces{weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve};
    if (const cudnnStatus_t s = check_spaces(*d, CUDNN_FWD_MODE_TRAINING, *x_desc, spaces); s != CUDNN_STATUS_SUCCESS)
        return s;
    return run_pass(handle, *d, *x_desc, *y_desc, dnn::RnnPass::BackwardData, spaces, dy, dx);
}

TBD_EXPORT cudnnStatus_t cudnnRNNBackwardWeights_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t d, cudnnWgradMode_t add,
                                                    const int32_t[], cudnnRNNDataDescriptor_t x_desc, const void* x,
                                                    cudnnTensorDescriptor_t, const void*,
                                                    cudnnRNNDataDescriptor_t y_desc, const void* y, size_t weight_bytes,
                                                    void* dweights, size_t workspace_bytes, void* workspace,
                                                    size_t reserve_bytes, void* reserve) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (add != CUDNN_WGRAD_MODE_ADD && add != CUDNN_WGRAD_MODE_SET) return CUDNN_STATUS_BAD_PARAM;
    if (const cudnnStatus_t s = check_data(d, x_desc, y_desc); s != CUDNN_STATUS_SUCCESS) return s;
    if (x == nullptr || y == nullptr) return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "rnn backward weights");
    const Spaces spaces{weight_bytes, dweights, workspace_bytes, workspace, reserve_bytes, reserve};
    if (const cudnnStatus_t s = check_spaces(*d, CUDNN_FWD_MODE_TRAINING, *x_desc, spaces); s != CUDNN_STATUS_SUCCESS)
        return s;
    return run_pass(handle, *d, *x_desc, *y_desc, dnn::RnnPass::BackwardWeights, spaces, x, dweights);
}
