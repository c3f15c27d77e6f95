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
//
// --checkpoint K: activation checkpointing in segments of K linear layers, the way
// torch.utils.checkpoint.checkpoint_sequential does it. The last segment runs as without it. In every
// other segment, forward keeps only the segment's output (the next segment's input) and frees each
// other activation after its last forward use; backward recomputes the segment from its input when
// it first needs one of them (those recomputed activations then live to the end of the micro-batch,
// as the others do).
//
// --free-in-backward: each activation is freed after its last use in backward, as autograd frees
// saved tensors, instead of at the end of the micro-batch (checkpointing saves memory only then).
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
    MlpModel(tbdsample::TrainingSession& session, int checkpoint_layers, bool free_in_backward)
        : session_(session), options_(session.options()), checkpoint_layers_(checkpoint_layers),
          free_in_backward_(free_in_backward),
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
        tbdsample::DeviceAllocator& allocator = session_.allocator();
        tbdsample::TensorScope step_tensors(allocator);

        // Input: fresh batch, copied host->device.
        float* features = step_tensors.allocate<float>(static_cast<std::size_t>(batch) * options_.input, Category::input);
        int* labels = step_tensors.allocate<int>(batch, Category::input);
        data_.next_batch(batch, static_cast<float*>(input_stager_.host_buffer()),
                         static_cast<int*>(label_stager_.host_buffer()));
        input_stager_.copy_to(features);
        label_stager_.copy_to(labels);

        tbdsample::NvtxRange forward_range = session_.range("forward");  // forward and loss
        // Forward. layer_input[l] is the input of linear layer l; pre_activation[l] its output
        // before the ReLU (kept for ReLU backward). With --checkpoint, activations of segments
        // but the last are freed after their last forward use (null entries: recompute them).
        std::vector<float*> layer_input{features};
        std::vector<float*> pre_activation;
        for (std::size_t layer = 0; layer < layer_count; ++layer) {
            const std::size_t count = static_cast<std::size_t>(batch) * widths_[layer + 1];
            float* z = step_tensors.allocate<float>(count, Category::activations);
            layer_forward(layer, layer_input[layer], z);
            // The layer's input was last used by its GEMM: free it if it is not a checkpoint.
            if (layer > 0 && recomputed(layer - 1) && !segment_output(layer - 1)) {
                step_tensors.release(layer_input[layer]);
                layer_input[layer] = nullptr;
            }
            pre_activation.push_back(z);
            if (layer + 1 < layer_count) {
                float* a = step_tensors.allocate<float>(count, Category::activations);
                tbdsample::launch_relu_forward(z, a, count, stream);
                layer_input.push_back(a);
            }
            if (recomputed(layer)) {  // the ReLU was the pre-activation's last forward use
                step_tensors.release(z);
                pre_activation.back() = nullptr;
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
            if (free_in_backward_) step_tensors.release(layer_input[layer]);  // its last use
            std::size_t count = static_cast<std::size_t>(batch) * in;
            float* grad_activation = step_tensors.allocate<float>(count, Category::activations);
            blas.gemm(false, false, batch, in, out, grad, session_.parameters()[weight_index_[layer]].values,
                      grad_activation);
            if (free_in_backward_) step_tensors.release(grad);
            // ReLU backward reads layer - 1's pre-activation: the first read of its segment's freed
            // activations (its output, read above, is the checkpoint): recompute the segment now.
            if (pre_activation[layer - 1] == nullptr)
                recompute_segment(layer - 1, step_tensors, layer_input, pre_activation);
            float* grad_pre_activation = step_tensors.allocate<float>(count, Category::activations);
            tbdsample::launch_relu_backward(grad_activation, pre_activation[layer - 1], grad_pre_activation,
                                            count, stream);
            if (free_in_backward_) {
                step_tensors.release(grad_activation);
                step_tensors.release(pre_activation[layer - 1]);
            }
            grad = grad_pre_activation;
        }
        // step_tensors frees inputs and (the remaining) activations here, at the end of the micro-batch.
    }

private:
    // Linear layer `layer`: z = input x W^T + b.
    void layer_forward(std::size_t layer, const float* input, float* z) {
        const tbdsample::ParameterSet& parameters = session_.parameters();
        session_.blas().gemm(false, true, options_.batch, widths_[layer + 1], widths_[layer], input,
                             parameters[weight_index_[layer]].values, z);
        tbdsample::launch_add_bias(z, parameters[bias_index_[layer]].values, options_.batch, widths_[layer + 1],
                                   session_.stream());
    }

    std::size_t segment_count() const {
        return (weight_index_.size() + checkpoint_layers_ - 1) / checkpoint_layers_;
    }
    // Whether a layer's activations are freed in forward and recomputed (all segments but the last).
    bool recomputed(std::size_t layer) const {
        return checkpoint_layers_ > 0 && layer / checkpoint_layers_ + 1 < segment_count();
    }
    // The last layer of its segment: its output is the next segment's input, kept through forward.
    bool segment_output(std::size_t layer) const { return (layer + 1) % checkpoint_layers_ == 0; }

    // Forward of the segment holding `layer` again, from its input (kept), for backward. The
    // recomputed tensors live to the end of the micro-batch.
    void recompute_segment(std::size_t layer, tbdsample::TensorScope& step_tensors, std::vector<float*>& layer_input,
                           std::vector<float*>& pre_activation) {
        const std::size_t first = layer / checkpoint_layers_ * checkpoint_layers_;
        const std::size_t last = first + checkpoint_layers_ - 1;
        for (std::size_t l = first; l <= last; ++l) {
            const std::size_t count = static_cast<std::size_t>(options_.batch) * widths_[l + 1];
            float* z = step_tensors.allocate<float>(count, Category::activations);
            layer_forward(l, layer_input[l], z);
            pre_activation[l] = z;
            if (l == last) continue;  // its output, the checkpoint, was kept
            float* a = step_tensors.allocate<float>(count, Category::activations);
            tbdsample::launch_relu_forward(z, a, count, session_.stream());
            layer_input[l + 1] = a;
        }
    }

    tbdsample::TrainingSession& session_;
    const tbdsample::CommonOptions& options_;
    const std::size_t checkpoint_layers_;  // 0: no checkpointing
    const bool free_in_backward_;          // free each activation after its last backward use
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
    int checkpoint_layers = 0;
    parser.add_int("checkpoint", &checkpoint_layers, 0, 1024,
                   "activation checkpointing in segments of K linear layers (0: off)");
    bool free_in_backward = false;
    parser.add_flag("free-in-backward", &free_in_backward,
                    "free each activation after its last use in backward, as autograd does (default: at the "
                    "end of the micro-batch)");
    parser.parse(argc, argv);

    tbdsample::TrainingSession session("mlp_train", options);
    MlpModel model(session, checkpoint_layers, free_in_backward);
    return session.run(model);
}
