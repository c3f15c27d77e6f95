// mlp_train: trains a multi-layer perceptron classifier on synthetic data.
//
// Each micro-batch: the input batch and its labels are copied host->device; forward runs one cuBLAS
// SGEMM per layer plus bias-add and ReLU kernels; a softmax/cross-entropy kernel gives the loss and
// the gradient of the logits; backward runs two SGEMMs per layer (weight gradient, activation
// gradient), a bias-gradient reduction and a ReLU-backward kernel. After `--accumulate` micro-batches
// the optimizer (SGD with momentum, or Adam) updates the weights in place.
//
// Memory: weights, optimizer state and (with --grad persistent) gradients live for the whole run;
// inputs and activations are allocated per micro-batch and freed at its end; the per-sample loss
// vector is a workspace that lives for the loss computation only.
#include "common/check.h"
#include "common/kernels.h"
#include "common/options.h"
#include "common/synthetic_data.h"
#include "common/training.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace {

using tbdsample::Category;

class MlpModel final : public tbdsample::TrainingModel {
public:
    explicit MlpModel(tbdsample::TrainingSession& session)
        : session_(session), options_(session.options()),
          data_(options_.input, options_.classes, options_.seed),
          input_stager_(sizeof(float) * options_.batch * options_.input, session.stream()),
          label_stager_(sizeof(int) * options_.batch, session.stream()) {
        widths_.push_back(options_.input);
        for (int layer = 0; layer < options_.layers; ++layer) widths_.push_back(options_.hidden);
        widths_.push_back(options_.classes);
        for (std::size_t layer = 0; layer + 1 < widths_.size(); ++layer) {
            int in = widths_[layer];
            int out = widths_[layer + 1];
            // He-uniform for the ReLU layers, plain 1/sqrt(fan_in) for the logits.
            bool feeds_relu = layer + 2 < widths_.size();
            float scale = std::sqrt((feeds_relu ? 6.0f : 3.0f) / static_cast<float>(in));
            weight_index_.push_back(session.parameters().add(
                "fc" + std::to_string(layer) + ".weight", static_cast<std::size_t>(in) * out, scale));
            bias_index_.push_back(
                session.parameters().add("fc" + std::to_string(layer) + ".bias", out, 0.0f));
        }
    }

    void train_micro_batch(const tbdsample::MicroBatch& micro_batch) override {
        const int batch = options_.batch;
        const std::size_t layer_count = weight_index_.size();
        cudaStream_t stream = session_.stream();
        tbdsample::BlasContext& blas = session_.blas();
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::TensorScope step_tensors(session_.allocator());

        // Input: fresh batch, copied host->device.
        float* features = step_tensors.allocate<float>(static_cast<std::size_t>(batch) * options_.input, Category::input);
        int* labels = step_tensors.allocate<int>(batch, Category::input);
        data_.next_batch(batch, static_cast<float*>(input_stager_.host_buffer()),
                         static_cast<int*>(label_stager_.host_buffer()));
        input_stager_.copy_to(features);
        label_stager_.copy_to(labels);

        tbdsample::NvtxRange forward_range = session_.range("forward");  // forward and loss
        // Forward. layer_input[l] is the input of linear layer l; pre_activation[l] its output
        // before the ReLU (kept for ReLU backward).
        std::vector<const float*> layer_input{features};
        std::vector<float*> pre_activation;
        for (std::size_t layer = 0; layer < layer_count; ++layer) {
            int in = widths_[layer];
            int out = widths_[layer + 1];
            float* z = step_tensors.allocate<float>(static_cast<std::size_t>(batch) * out, Category::activations);
            blas.gemm(false, true, batch, out, in, layer_input[layer], parameters[weight_index_[layer]].values, z);
            tbdsample::launch_add_bias(z, parameters[bias_index_[layer]].values, batch, out, stream);
            pre_activation.push_back(z);
            if (layer + 1 < layer_count) {
                float* a = step_tensors.allocate<float>(static_cast<std::size_t>(batch) * out, Category::activations);
                tbdsample::launch_relu_forward(z, a, static_cast<std::size_t>(batch) * out, stream);
                layer_input.push_back(a);
            }
        }

        // Loss. The per-sample losses are a temporary of this one operation (workspace).
        const float* logits = pre_activation.back();
        float* grad = step_tensors.allocate<float>(static_cast<std::size_t>(batch) * options_.classes,
                                                   Category::activations);
        float* row_loss = session_.allocator().allocate_array<float>(batch, Category::workspace);
        tbdsample::launch_softmax_cross_entropy(logits, labels, row_loss, grad, batch, options_.classes,
                                                micro_batch.loss_scale, stream);
        tbdsample::launch_sum_into(row_loss, batch, micro_batch.loss_scale, micro_batch.loss_total, stream);
        session_.allocator().release(row_loss);

        forward_range.end();
        tbdsample::NvtxRange backward_range = session_.range("backward");
        // Backward: `grad` holds d(loss)/d(output of linear layer `layer`, before its ReLU).
        for (std::size_t layer = layer_count; layer-- > 0;) {
            int in = widths_[layer];
            int out = widths_[layer + 1];
            tbdsample::GradientTarget weight_grad = micro_batch.gradients.acquire(weight_index_[layer]);
            blas.gemm(true, false, out, in, batch, grad, layer_input[layer], weight_grad.values, weight_grad.beta);
            tbdsample::GradientTarget bias_grad = micro_batch.gradients.acquire(bias_index_[layer]);
            tbdsample::launch_bias_grad(grad, bias_grad.values, batch, out, bias_grad.beta, stream);
            if (layer == 0) break;  // no gradient needed for the input batch
            std::size_t count = static_cast<std::size_t>(batch) * in;
            float* grad_activation = step_tensors.allocate<float>(count, Category::activations);
            blas.gemm(false, false, batch, in, out, grad, parameters[weight_index_[layer]].values, grad_activation);
            float* grad_pre_activation = step_tensors.allocate<float>(count, Category::activations);
            tbdsample::launch_relu_backward(grad_activation, pre_activation[layer - 1], grad_pre_activation,
                                            count, stream);
            grad = grad_pre_activation;
        }
        // step_tensors frees inputs and activations here, at the end of the micro-batch.
    }

private:
    tbdsample::TrainingSession& session_;
    const tbdsample::CommonOptions& options_;
    tbdsample::SyntheticClassification data_;
    tbdsample::InputStager input_stager_;
    tbdsample::InputStager label_stager_;
    std::vector<int> widths_;  // input, hidden..., classes
    std::vector<std::size_t> weight_index_;
    std::vector<std::size_t> bias_index_;
};

}  // namespace

int main(int argc, char** argv) {
    tbdsample::CommonOptions options;  // defaults: 20 iterations, batch 64, 256 -> 2 x 512 -> 10
    tbdsample::OptionParser parser("mlp_train",
                                   "Trains a multi-layer perceptron (cuBLAS SGEMM + own kernels) on synthetic data.");
    tbdsample::add_common_options(parser, options);
    parser.parse(argc, argv);

    tbdsample::TrainingSession session("mlp_train", options);
    MlpModel model(session);
    return session.run(model);
}
