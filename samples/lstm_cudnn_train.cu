// lstm_cudnn_train: trains a stacked LSTM sequence classifier through cuDNN's RNN API (v8) on
// synthetic data: the network of lstm_train, with the recurrence in three library calls instead of
// hand-written kernels and per-step GEMMs.
//
// Setup: cudnnSetRNNDescriptor_v8 (LSTM, double bias, unidirectional, FP32), cudnnGetRNNWeightSpaceSize
// and cudnnGetRNNTempSpaceSizes. The weight space is one parameter (every layer's matrices and biases
// in cuDNN's layout), its gradient one buffer of the same size; the optimizer treats each as one tensor.
// Each micro-batch: a [seq_len, batch, input] sequence (CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED), its
// labels and the sequence lengths (device copy, as cudnnRNNForward asks) are copied host->device;
// cudnnRNNForward (training) writes y and the reserve space; a linear layer on the last step's y gives
// the logits, softmax/cross-entropy the loss; backward puts the classifier's gradient into the last
// step of dy (the other steps zero), then cudnnRNNBackwardData_v8 (dx: the input's gradient, needed by
// the call, unused) and cudnnRNNBackwardWeights_v8 (CUDNN_WGRAD_MODE_ADD, the mode cuDNN documents for
// it, into a gradient zeroed by cudaMemsetAsync on the step's first write).
//
// Memory: weight space = weights, its gradient = gradients; x, labels and sequence lengths = input; y,
// dy, dx and the reserve space (gates and states kept from forward for backward) = activations; the
// temp space each call gets = workspace, allocated for that call alone as a framework does.
//
// Before the summary the program prints `lstm_cudnn_train: flops_per_iteration=F`, the FLOPs one
// iteration must have by the counting rules of docs/simgpu-cudnn.md, from the network's shapes.
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cnn_cudnn.h"
#include "common/check.h"
#include "common/kernels.h"
#include "common/options.h"
#include "common/synthetic_data.h"
#include "common/training.h"

namespace {

using tbdsample::Category;

// Owned cuDNN descriptors of the recurrence: the RNN itself, x and y as RNN data, h and c.
struct RnnDescriptors {
    cudnnRNNDescriptor_t rnn = nullptr;
    cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
    cudnnTensorDescriptor_t state = nullptr;  // [layers, batch, hidden]: h and c (passed as NULL)

    RnnDescriptors(const tbdsample::CommonOptions& options, int seq_len, cudnnMathType_t math) {
        CUDNN_CHECK(cudnnCreateRNNDescriptor(&rnn));
        CUDNN_CHECK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                             CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                             CUDNN_DATA_FLOAT, math, options.input, options.hidden, options.hidden,
                                             options.layers, nullptr, CUDNN_RNN_PADDED_IO_DISABLED));
        const std::vector<int> lengths(static_cast<std::size_t>(options.batch), seq_len);
        CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&x));
        CUDNN_CHECK(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, seq_len,
                                              options.batch, options.input, lengths.data(), nullptr));
        CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&y));
        CUDNN_CHECK(cudnnSetRNNDataDescriptor(y, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, seq_len,
                                              options.batch, options.hidden, lengths.data(), nullptr));
        const int dims[3] = {options.layers, options.batch, options.hidden};
        const int strides[3] = {options.batch * options.hidden, options.hidden, 1};
        CUDNN_CHECK(cudnnCreateTensorDescriptor(&state));
        CUDNN_CHECK(cudnnSetTensorNdDescriptor(state, CUDNN_DATA_FLOAT, 3, dims, strides));
    }
    ~RnnDescriptors() {
        cudnnDestroyTensorDescriptor(state);
        cudnnDestroyRNNDataDescriptor(y);
        cudnnDestroyRNNDataDescriptor(x);
        cudnnDestroyRNNDescriptor(rnn);
    }
    RnnDescriptors(const RnnDescriptors&) = delete;
    RnnDescriptors& operator=(const RnnDescriptors&) = delete;
};

class CudnnLstmModel final : public tbdsample::TrainingModel {
public:
    CudnnLstmModel(tbdsample::TrainingSession& session, int seq_len, cudnnMathType_t math)
        : session_(session),
          options_(session.options()),
          seq_len_(seq_len),
          data_(seq_len * options_.input, options_.classes, options_.seed),
          sample_major_(static_cast<std::size_t>(options_.batch) * seq_len * options_.input),
          input_stager_(sizeof(float) * sample_major_.size(), session.stream()),
          label_stager_(sizeof(int) * options_.batch, session.stream()),
          length_stager_(sizeof(int32_t) * options_.batch, session.stream()),
          descriptors_(options_, seq_len, math) {
        CUDNN_CHECK(cudnnCreate(&handle_));
        CUDNN_CHECK(cudnnSetStream(handle_, session.stream()));
        CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle_, descriptors_.rnn, &weight_space_bytes_));
        CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle_, descriptors_.rnn, CUDNN_FWD_MODE_TRAINING, descriptors_.x,
                                              &workspace_bytes_, &reserve_bytes_));
        const float scale = 1.0f / std::sqrt(static_cast<float>(options_.hidden));
        tbdsample::ParameterSet& parameters = session.parameters();
        weight_space_ = parameters.add("lstm.weight_space", weight_space_bytes_ / sizeof(float), scale);
        w_out_ = parameters.add("fc.weight", static_cast<std::size_t>(options_.classes) * options_.hidden, scale);
        b_out_ = parameters.add("fc.bias", options_.classes, 0.0f);
    }

    ~CudnnLstmModel() override { cudnnDestroy(handle_); }

    // Per layer over batch x seq_len steps (docs/simgpu-cudnn.md): the 4 gates' GEMMs
    // 2 * steps * 4 * hidden * (layer input + hidden), two biases steps * 4 * hidden each, the cell
    // 24 * steps * hidden; forward all three, backward data GEMMs and cell, backward weights GEMMs
    // and biases. The classifier's three GEMMs 2 * batch * classes * hidden each.
    double flops_per_iteration() const {
        const double steps = static_cast<double>(options_.batch) * seq_len_, hidden = options_.hidden;
        double flops = 0;
        for (int layer = 0; layer < options_.layers; ++layer) {
            const double in = layer == 0 ? options_.input : hidden;
            const double gemms = 2 * steps * 4 * hidden * (in + hidden), biases = 2 * steps * 4 * hidden;
            const double cell = 24 * steps * hidden;
            flops += (gemms + biases + cell) + (gemms + cell) + (gemms + biases);
        }
        flops += 3 * 2.0 * options_.batch * options_.classes * hidden;
        return flops * options_.accumulate;
    }

    void train_micro_batch(const tbdsample::MicroBatch& micro_batch) override {
        tbdsample::TensorScope tensors(session_.allocator());
        const Batch batch = load_input(tensors);
        tbdsample::NvtxRange forward_range = session_.range("forward");
        float* y = tensors.allocate<float>(rows(options_.hidden) * seq_len_, Category::activations);
        void* reserve = tensors.allocate<unsigned char>(reserve_bytes_, Category::activations);
        const float* weights = session_.parameters()[weight_space_].values;
        with_workspace([&](void* workspace) {
            CUDNN_CHECK(cudnnRNNForward(handle_, descriptors_.rnn, CUDNN_FWD_MODE_TRAINING, batch.lengths,
                                        descriptors_.x, batch.x, descriptors_.y, y, descriptors_.state, nullptr,
                                        nullptr, descriptors_.state, nullptr, nullptr, weight_space_bytes_, weights,
                                        workspace_bytes_, workspace, reserve_bytes_, reserve));
        });
        // dy: zero but for the last step, where the classifier's backward writes its gradient.
        float* dy = tensors.allocate<float>(rows(options_.hidden) * seq_len_, Category::activations);
        CUDA_CHECK(cudaMemsetAsync(dy, 0, rows(options_.hidden) * seq_len_ * sizeof(float), session_.stream()));
        const std::size_t last_step = rows(options_.hidden) * (seq_len_ - 1);
        head(y + last_step, batch.labels, dy + last_step, micro_batch, tensors);
        forward_range.end();

        tbdsample::NvtxRange backward_range = session_.range("backward");
        float* dx = tensors.allocate<float>(rows(options_.input) * seq_len_, Category::activations);
        with_workspace([&](void* workspace) {
            CUDNN_CHECK(cudnnRNNBackwardData_v8(handle_, descriptors_.rnn, batch.lengths, descriptors_.y, y, dy,
                                                descriptors_.x, dx, descriptors_.state, nullptr, nullptr, nullptr,
                                                descriptors_.state, nullptr, nullptr, nullptr, weight_space_bytes_,
                                                weights, workspace_bytes_, workspace, reserve_bytes_, reserve));
        });
        // cuDNN documents only CUDNN_WGRAD_MODE_ADD for this call, so a first write this step adds
        // into a zeroed buffer (as PyTorch zeroes dw before it).
        tbdsample::GradientTarget grad = micro_batch.gradients.acquire(weight_space_);
        if (grad.beta == 0.0f) {
            CUDA_CHECK(cudaMemsetAsync(grad.values, 0, weight_space_bytes_, session_.stream()));
        }
        with_workspace([&](void* workspace) {
            CUDNN_CHECK(cudnnRNNBackwardWeights_v8(handle_, descriptors_.rnn, CUDNN_WGRAD_MODE_ADD, batch.lengths,
                                                   descriptors_.x, batch.x, descriptors_.state, nullptr, descriptors_.y,
                                                   y, weight_space_bytes_, grad.values, workspace_bytes_, workspace,
                                                   reserve_bytes_, reserve));
        });
    }

private:
    struct Batch {
        const float* x;  // [seq_len, batch, input]
        const int* labels;
        const int32_t* lengths;  // [batch], all seq_len
    };

    std::size_t rows(int width) const { return static_cast<std::size_t>(options_.batch) * width; }

    // Runs `call(workspace)` with the temp space the size query asked for, allocated for it alone.
    template <typename Call>
    void with_workspace(Call&& call) {
        void* workspace =
            workspace_bytes_ > 0 ? session_.allocator().allocate(workspace_bytes_, Category::workspace) : nullptr;
        call(workspace);
        if (workspace != nullptr) session_.allocator().release(workspace);
    }

    Batch load_input(tbdsample::TensorScope& tensors) {
        const int batch = options_.batch, input = options_.input;
        float* sequence = tensors.allocate<float>(sample_major_.size(), Category::input);
        int* labels = tensors.allocate<int>(batch, Category::input);
        auto* lengths = tensors.allocate<int32_t>(batch, Category::input);
        // The generator writes sample-major [batch, seq_len, input]; the RNN data layout is time-major.
        data_.next_batch(batch, sample_major_.data(), static_cast<int*>(label_stager_.host_buffer()));
        auto* time_major = static_cast<float*>(input_stager_.host_buffer());
        for (int sample = 0; sample < batch; ++sample)
            for (int t = 0; t < seq_len_; ++t)
                for (int f = 0; f < input; ++f)
                    time_major[(static_cast<std::size_t>(t) * batch + sample) * input + f] =
                        sample_major_[(static_cast<std::size_t>(sample) * seq_len_ + t) * input + f];
        auto* host_lengths = static_cast<int32_t*>(length_stager_.host_buffer());
        for (int sample = 0; sample < batch; ++sample) host_lengths[sample] = seq_len_;
        input_stager_.copy_to(sequence);
        label_stager_.copy_to(labels);
        length_stager_.copy_to(lengths);
        return {sequence, labels, lengths};
    }

    // Classifier on the last step's hidden state, the loss and the classifier's backward, which
    // writes d(loss)/d(last hidden state) to grad_hidden.
    void head(const float* last_hidden, const int* labels, float* grad_hidden, const tbdsample::MicroBatch& micro_batch,
              tbdsample::TensorScope& tensors) {
        const int batch = options_.batch, hidden = options_.hidden, classes = options_.classes;
        cudaStream_t stream = session_.stream();
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::BlasContext& blas = session_.blas();
        float* logits = tensors.allocate<float>(rows(classes), Category::activations);
        blas.gemm(false, true, batch, classes, hidden, last_hidden, parameters[w_out_].values, logits);
        tbdsample::launch_add_bias(logits, parameters[b_out_].values, batch, classes, stream);
        float* grad_logits = tensors.allocate<float>(rows(classes), Category::activations);
        float* row_loss = session_.allocator().allocate_array<float>(batch, Category::workspace);
        tbdsample::launch_softmax_cross_entropy(logits, labels, row_loss, grad_logits, batch, classes,
                                                micro_batch.loss_scale, stream);
        tbdsample::launch_sum_into(row_loss, batch, micro_batch.loss_scale, micro_batch.loss_total, stream);
        session_.allocator().release(row_loss);
        tbdsample::GradientTarget weight_grad = micro_batch.gradients.acquire(w_out_);
        blas.gemm(true, false, classes, hidden, batch, grad_logits, last_hidden, weight_grad.values, weight_grad.beta);
        tbdsample::GradientTarget bias_grad = micro_batch.gradients.acquire(b_out_);
        tbdsample::launch_bias_grad(grad_logits, bias_grad.values, batch, classes, bias_grad.beta, stream);
        blas.gemm(false, false, batch, hidden, classes, grad_logits, parameters[w_out_].values, grad_hidden);
    }

    tbdsample::TrainingSession& session_;
    const tbdsample::CommonOptions& options_;
    int seq_len_;
    tbdsample::SyntheticClassification data_;
    std::vector<float> sample_major_;  // host scratch of one batch, before reordering to time-major
    tbdsample::InputStager input_stager_;
    tbdsample::InputStager label_stager_;
    tbdsample::InputStager length_stager_;
    RnnDescriptors descriptors_;
    cudnnHandle_t handle_ = nullptr;
    std::size_t weight_space_bytes_ = 0, workspace_bytes_ = 0, reserve_bytes_ = 0;
    std::size_t weight_space_ = 0, w_out_ = 0, b_out_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    tbdsample::CommonOptions options;
    options.batch = 16;
    options.hidden = 64;
    options.input = 32;
    options.layers = 2;
    int seq_len = 8;
    int math = 0;
    tbdsample::OptionParser parser("lstm_cudnn_train",
                                   "Trains a stacked LSTM sequence classifier through cuDNN's RNN API "
                                   "(cudnnRNNForward, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8).");
    tbdsample::add_common_options(parser, options);
    parser.add_int("seq-len", &seq_len, 1, 4096, "time steps of each sequence");
    parser.add_choice(
        "math", {"fma", "tf32"}, 0, [&](int index) { math = index; },
        "RNN math: fma (CUDNN_FMA_MATH, FP32) or tf32 (CUDNN_DEFAULT_MATH, TF32 allowed)");
    parser.parse(argc, argv);

    tbdsample::TrainingSession session("lstm_cudnn_train", options);
    CudnnLstmModel model(session, seq_len, math == 1 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
    std::printf("lstm_cudnn_train: flops_per_iteration=%.17g\n", model.flops_per_iteration());
    return session.run(model);
}
