// cuDNN RNNs (the v8 API) and CTC loss as library calls (what is recorded and why: cudnn_hook_support.h).
#include "cudnn_hook_support.h"
#include "cudnn_operands.h"

using namespace tbdprof::preload;
using tbdprof::raw::LibraryOp;
using tbdprof::raw::RawLibraryCall;
namespace {

LibraryFunction<decltype(&cudnnGetRNNDataDescriptor)> real_get_rnn_data{"cudnnGetRNNDataDescriptor"};

// The bytes an RNN data tensor spans: max_length x batch vectors in every layout (0 unknown).
uint64_t rnn_data_bytes(cudnnRNNDataDescriptor_t desc) {
    auto get = real_get_rnn_data.get();
    cudnnDataType_t type{};
    cudnnRNNDataLayout_t layout{};
    int max_length = 0, batch = 0, vector = 0;
    if (get == nullptr ||
        get(desc, &type, &layout, &max_length, &batch, &vector, 0, nullptr, nullptr) != CUDNN_STATUS_SUCCESS) {
        return 0;
    }
    return static_cast<uint64_t>(max_length) * static_cast<uint64_t>(batch) * static_cast<uint64_t>(vector) *
           static_cast<uint64_t>(element_bytes(type));
}

// An RNN call's shape from its descriptors (read back with cuDNN's getters) and its FLOPs as the
// simulator counts them; left at 0 when a descriptor cannot be read.
void describe_rnn(RawLibraryCall& record, cudnnRNNDescriptor_t rnn, cudnnRNNDataDescriptor_t x_desc,
                  cudnn_flops::RnnPass pass) {
    static LibraryFunction<decltype(&cudnnGetRNNDescriptor_v8)> get_rnn{"cudnnGetRNNDescriptor_v8"};
    auto rnn_fn = get_rnn.get();
    auto data_fn = real_get_rnn_data.get();
    cudnnRNNMode_t cell{};
    cudnnRNNBiasMode_t bias{};
    cudnnDirectionMode_t direction{};
    cudnnDataType_t type{}, data_type{};
    cudnnMathType_t math{};
    int32_t input = 0, hidden = 0, layers = 0;
    cudnnRNNDataLayout_t layout{};
    int max_length = 0, batch = 0, vector = 0;
    if (rnn_fn == nullptr || data_fn == nullptr ||
        rnn_fn(rnn, nullptr, &cell, &bias, &direction, nullptr, &type, nullptr, &math, &input, &hidden, nullptr,
               &layers, nullptr, nullptr) != CUDNN_STATUS_SUCCESS ||
        data_fn(x_desc, &data_type, &layout, &max_length, &batch, &vector, 0, nullptr, nullptr) !=
            CUDNN_STATUS_SUCCESS ||
        batch <= 0) {
        return;
    }
    std::vector<int> lengths(static_cast<size_t>(batch));
    if (data_fn(x_desc, &data_type, &layout, &max_length, &batch, &vector, batch, lengths.data(), nullptr) !=
        CUDNN_STATUS_SUCCESS) {
        return;
    }
    cudnn_flops::RnnShape shape{cell, bias, layers, direction == CUDNN_BIDIRECTIONAL ? 2 : 1, input, hidden, 0};
    for (const int length : lengths) shape.steps += length;
    record.a_type = record.b_type = record.c_type = cuda_type_of(type);
    record.compute_type = convolution_compute_type(type, math);
    record.m = shape.steps;
    record.n = hidden;
    record.k = input;
    record.batch = layers * shape.directions;
    record.flops = cudnn_flops::rnn_flops(pass, shape);
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t rnn,
                                                     cudnnForwardMode_t mode, const int32_t dev_lengths[],
                                                     cudnnRNNDataDescriptor_t x_desc, const void* x,
                                                     cudnnRNNDataDescriptor_t y_desc, void* y,
                                                     cudnnTensorDescriptor_t h_desc, const void* hx, void* hy,
                                                     cudnnTensorDescriptor_t c_desc, const void* cx, void* cy,
                                                     size_t weight_bytes, const void* weights, size_t workspace_bytes,
                                                     void* workspace, size_t reserve_bytes, void* reserve) {
    TBD_CUDNN_CALL(cudnnRNNForward, (handle, rnn, mode, dev_lengths, x_desc, x, y_desc, y, h_desc, hx, hy, c_desc, cx,
                                     cy, weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        // x and the weight space in, y out.
        common(thread, record, "cudnnRNNForward", LibraryOp::RnnForward, handle, x, weights, y);
        describe_extents(record, rnn_data_bytes(x_desc), weight_bytes, rnn_data_bytes(y_desc));
        describe_workspace(record, workspace, workspace_bytes);
        const uint64_t h_bytes = tensor_bytes(h_desc), c_bytes = tensor_bytes(c_desc);
        record_operand(thread, record, LibraryOperandRole::HiddenIn, hx, h_bytes, OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::CellIn, cx, c_bytes, OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::HiddenOut, hy, h_bytes, OperandAccess::Write);
        record_operand(thread, record, LibraryOperandRole::CellOut, cy, c_bytes, OperandAccess::Write);
        // Training writes what backward reads; inference needs no reserve space.
        if (mode == CUDNN_FWD_MODE_TRAINING)
            record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Write);
        describe_rnn(record, rnn, x_desc, cudnn_flops::RnnPass::Forward);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnRNNBackwardData_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, const int32_t dev_lengths[], cudnnRNNDataDescriptor_t y_desc,
    const void* y, const void* dy, cudnnRNNDataDescriptor_t x_desc, void* dx, cudnnTensorDescriptor_t h_desc,
    const void* hx, const void* dhy, void* dhx, cudnnTensorDescriptor_t c_desc, const void* cx, const void* dcy,
    void* dcx, size_t weight_bytes, const void* weights, size_t workspace_bytes, void* workspace, size_t reserve_bytes,
    void* reserve) {
    TBD_CUDNN_CALL(cudnnRNNBackwardData_v8,
                   (handle, rnn, dev_lengths, y_desc, y, dy, x_desc, dx, h_desc, hx, dhy, dhx, c_desc, cx, dcy, dcx,
                    weight_bytes, weights, workspace_bytes, workspace, reserve_bytes, reserve))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        // dy and the weight space in, dx out.
        common(thread, record, "cudnnRNNBackwardData_v8", LibraryOp::RnnBackwardData, handle, dy, weights, dx);
        describe_extents(record, rnn_data_bytes(y_desc), weight_bytes, rnn_data_bytes(x_desc));
        describe_workspace(record, workspace, workspace_bytes);
        // Roles by tensor position: the gradients of hy/cy are read, those of hx/cx written.
        const uint64_t h_bytes = tensor_bytes(h_desc), c_bytes = tensor_bytes(c_desc);
        record_operand(thread, record, LibraryOperandRole::Input, y, rnn_data_bytes(y_desc), OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::HiddenIn, hx, h_bytes, OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::CellIn, cx, c_bytes, OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::HiddenOut, dhy, h_bytes, OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::CellOut, dcy, c_bytes, OperandAccess::Read);
        record_operand(thread, record, LibraryOperandRole::HiddenIn, dhx, h_bytes, OperandAccess::Write);
        record_operand(thread, record, LibraryOperandRole::CellIn, dcx, c_bytes, OperandAccess::Write);
        // cuDNN's reference: reserveSpace is input/output here (backward weights reads what it leaves).
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::ReadWrite);
        describe_rnn(record, rnn, x_desc, cudnn_flops::RnnPass::BackwardData);
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnRNNBackwardWeights_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, cudnnWgradMode_t add, const int32_t dev_lengths[],
    cudnnRNNDataDescriptor_t x_desc, const void* x, cudnnTensorDescriptor_t h_desc, const void* hx,
    cudnnRNNDataDescriptor_t y_desc, const void* y, size_t weight_bytes, void* dweights, size_t workspace_bytes,
    void* workspace, size_t reserve_bytes, void* reserve) {
    TBD_CUDNN_CALL(cudnnRNNBackwardWeights_v8,
                   (handle, rnn, add, dev_lengths, x_desc, x, h_desc, hx, y_desc, y, weight_bytes, dweights,
                    workspace_bytes, workspace, reserve_bytes, reserve))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        // x and y in, the weight gradients out.
        common(thread, record, "cudnnRNNBackwardWeights_v8", LibraryOp::RnnBackwardWeights, handle, x, y, dweights);
        describe_extents(record, rnn_data_bytes(x_desc), rnn_data_bytes(y_desc), weight_bytes);
        describe_workspace(record, workspace, workspace_bytes);
        record_operand(thread, record, LibraryOperandRole::HiddenIn, hx, tensor_bytes(h_desc), OperandAccess::Read);
        record_reserve(thread, record, reserve, reserve_bytes, OperandAccess::Read);
        describe_rnn(record, rnn, x_desc, cudnn_flops::RnnPass::BackwardWeights);
    });
}

namespace {

// The CTC descriptor's normalization mode and maximum label length; false when unreadable.
bool ctc_settings(cudnnCTCLossDescriptor_t ctc, bool* softmax, int* max_label_length) {
    static LibraryFunction<decltype(&cudnnGetCTCLossDescriptor_v9)> get{"cudnnGetCTCLossDescriptor_v9"};
    cudnnDataType_t type{};
    cudnnLossNormalizationMode_t normalization{};
    cudnnCTCGradMode_t grad_mode{};
    auto fn = get.get();
    if (fn == nullptr || fn(ctc, &type, &normalization, &grad_mode, max_label_length) != CUDNN_STATUS_SUCCESS)
        return false;
    *softmax = normalization == CUDNN_LOSS_NORMALIZATION_SOFTMAX;
    return true;
}

}  // namespace

extern "C" TBD_VISIBLE cudnnStatus_t cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probs_desc,
                                                  const void* probs, const int labels[], const int label_lengths[],
                                                  const int input_lengths[], void* costs,
                                                  const cudnnTensorDescriptor_t gradients_desc, void* gradients,
                                                  cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctc,
                                                  void* workspace, size_t workspace_bytes) {
    TBD_CUDNN_CALL(cudnnCTCLoss, (handle, probs_desc, probs, labels, label_lengths, input_lengths, costs,
                                  gradients_desc, gradients, algo, ctc, workspace, workspace_bytes))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnCTCLoss", LibraryOp::CtcLoss, handle, probs, nullptr, gradients);
        describe_extents(record, tensor_bytes(probs_desc), 0, gradients != nullptr ? tensor_bytes(gradients_desc) : 0);
        describe_workspace(record, workspace, workspace_bytes);
        Tensor p;
        bool softmax = true;
        int max_label_length = 0;
        if (!read_tensor(probs_desc, &p) || p.dims != 3 || !ctc_settings(ctc, &softmax, &max_label_length)) return;
        int64_t label_steps = 0;  // the lengths are in host memory (this API's contract)
        for (int n = 0; n < p.dim[1]; ++n)
            label_steps += static_cast<int64_t>(input_lengths[n]) * (2 * label_lengths[n] + 1);
        describe_elementwise(record, probs_desc, [&](int64_t e) {
            return cudnn_flops::ctc_loss_flops(softmax, gradients != nullptr, e, label_steps);
        });
    });
}

extern "C" TBD_VISIBLE cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                                     cudnnCTCLossDescriptor_t ctc,
                                                     const cudnnTensorDescriptor_t probs_desc, const void* probs,
                                                     const int labels[], const int label_lengths[],
                                                     const int input_lengths[], void* costs,
                                                     const cudnnTensorDescriptor_t gradients_desc, void* gradients,
                                                     size_t workspace_bytes, void* workspace) {
    TBD_CUDNN_CALL(cudnnCTCLoss_v8, (handle, algo, ctc, probs_desc, probs, labels, label_lengths, input_lengths, costs,
                                     gradients_desc, gradients, workspace_bytes, workspace))
    return record_library_call(call, [&](ThreadState& thread, RawLibraryCall& record) {
        common(thread, record, "cudnnCTCLoss_v8", LibraryOp::CtcLoss, handle, probs, nullptr, gradients);
        describe_extents(record, tensor_bytes(probs_desc), 0, gradients != nullptr ? tensor_bytes(gradients_desc) : 0);
        describe_workspace(record, workspace, workspace_bytes);
        Tensor p;
        bool softmax = true;
        int max_label_length = 0;
        if (!read_tensor(probs_desc, &p) || p.dims != 3 || !ctc_settings(ctc, &softmax, &max_label_length)) return;
        // Lengths in device memory are not read here: every sample counted at T steps and the longest label.
        const int64_t label_steps = static_cast<int64_t>(p.dim[0]) * p.dim[1] * (2 * int64_t{max_label_length} + 1);
        describe_elementwise(record, probs_desc, [&](int64_t e) {
            return cudnn_flops::ctc_loss_flops(softmax, gradients != nullptr, e, label_steps);
        });
    });
}
