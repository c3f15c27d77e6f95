// cnn_train: trains a small convolutional classifier through cuDNN on synthetic images.
//
// Network: `--layers` blocks of [3x3 convolution (cuDNN, no bias) -> batch norm (training mode) ->
// ReLU -> 2x2 max pooling], the channels starting at `--hidden` and doubling per block, then a
// fully-connected classifier (cuBLAS SGEMM + bias kernel) and softmax cross-entropy (own kernel).
// Backward runs cuDNN's pooling, activation, batch-norm and convolution backward-filter /
// backward-data calls (no data gradient for the input batch) and the classifier's two SGEMMs.
// Convolution algorithms come from the Get_v7 queries; each call gets its own workspace.
//
// Memory: parameters (conv filters, batch-norm scale and shift, classifier) and the batch-norm
// running statistics (model state: weights) live for the run; activations, the saved batch-norm
// statistics and inputs live for one micro-batch; convolution workspaces for one call.
//
// With --api backend the convolutions run as backend execution plans and the classifier's forward as
// one matmul + pointwise ADD (bias) graph, as PyTorch's cuDNN front end builds them.
//
// With --block fused a block is [3x3 convolution with bias and ReLU in one
// cudnnConvolutionBiasActivationForward -> 2x2 max pooling] (no batch norm; backward adds
// cudnnConvolutionBackwardBias). --dropout P puts cuDNN dropout after each block's ReLU: its random
// states live for the run (category other: a library's generator state), its reserve space (the keep
// mask) for the micro-batch, as activations.
//
// --batch-norm ex runs batch norm through cudnnBatchNormalizationForwardTrainingEx / BackwardEx with
// the workspace (per call, workspace) and reserve space (kept from forward to backward, activations)
// their size queries ask for; --batch-norm ex-relu fuses the ReLU into them
// (CUDNN_BATCHNORM_OPS_BN_ACTIVATION: no activation calls of its own).
//
// Before the summary the program prints `cnn_train: flops_per_iteration=F`, the FLOPs one iteration
// must have by the counting rules of docs/simgpu-cudnn.md, computed from the network's shapes.
#include <cublas_v2.h>
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cnn_batch_norm_ex.h"
#include "cnn_cudnn.h"
#include "common/check.h"
#include "common/kernels.h"
#include "common/options.h"
#include "common/synthetic_data.h"
#include "common/training.h"

namespace {

using tbdsample::Category;

struct CnnOptions {
    int image = 16;
    int math = 0;          // 0: fma (FP32), 1: tf32 (CUDNN_DEFAULT_MATH: TF32 tensor cores allowed)
    bool backend = false;  // --api backend: convolutions and the classifier's forward as backend graphs
    bool fused = false;    // --block fused: convolution + bias + ReLU in one call, no batch norm
    float dropout = 0;     // --dropout: cuDNN dropout after each block's ReLU when > 0
    int batch_norm = 0;    // --batch-norm: 0 plain calls, 1 Ex API, 2 Ex API with the ReLU fused
};

struct Block {
    int in, out, size;  // channels in/out, input height = width
    std::unique_ptr<tbdsample::ConvLayer> conv;
    std::unique_ptr<tbdsample::TensorDesc> conv_out, bn_params, pooled;
    std::size_t weight = 0, scale = 0, shift = 0, bias = 0;  // parameter indices (bias: fused blocks)
    float* running_mean = nullptr;
    float* running_variance = nullptr;
    std::unique_ptr<tbdsample::BatchNormEx> bn_ex;  // --batch-norm ex / ex-relu
};

// What a block's forward keeps for its backward.
struct Saved {
    const float* x = nullptr;
    float *z = nullptr, *normalized = nullptr, *activated = nullptr, *dropped = nullptr, *pooled = nullptr,
          *mean = nullptr, *inv_variance = nullptr;
    void* reserve = nullptr;     // dropout's keep mask
    void* bn_reserve = nullptr;  // batch norm Ex's reserve space (with the fused ReLU)
};

class CnnModel final : public tbdsample::TrainingModel {
public:
    CnnModel(tbdsample::TrainingSession& session, const CnnOptions& cnn)
        : session_(session),
          options_(session.options()),
          cnn_(cnn),
          data_(options_.input * cnn.image * cnn.image, options_.classes, options_.seed),
          input_stager_(sizeof(float) * options_.batch * options_.input * cnn.image * cnn.image, session.stream()),
          label_stager_(sizeof(int) * options_.batch, session.stream()) {
        CUDNN_CHECK(cudnnCreate(&handle_));
        CUDNN_CHECK(cudnnSetStream(handle_, session.stream()));
        CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pooling_));
        CUDNN_CHECK(
            cudnnSetPooling2dDescriptor(pooling_, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
        CUDNN_CHECK(cudnnCreateActivationDescriptor(&relu_));
        CUDNN_CHECK(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
        const cudnnMathType_t math = cnn.math == 1 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
        tbdsample::ParameterSet& parameters = session.parameters();
        int channels = options_.input, size = cnn.image;
        for (int l = 0; l < options_.layers; ++l) {
            Block b;
            b.in = channels;
            b.out = options_.hidden << l;
            b.size = size;
            const std::string name = "block" + std::to_string(l);
            b.conv =
                std::make_unique<tbdsample::ConvLayer>(handle_, options_.batch, b.in, b.out, size, math, cnn.backend);
            b.conv_out = std::make_unique<tbdsample::TensorDesc>(options_.batch, b.out, size, size);
            b.bn_params = std::make_unique<tbdsample::TensorDesc>(1, b.out, 1, 1);
            b.pooled = std::make_unique<tbdsample::TensorDesc>(options_.batch, b.out, size / 2, size / 2);
            b.weight = parameters.add(name + ".conv.weight", static_cast<std::size_t>(b.out) * b.in * 9,
                                      std::sqrt(6.0f / static_cast<float>(b.in * 9)));
            if (cnn.fused) {
                b.bias = parameters.add_constant(name + ".conv.bias", b.out, 0.0f);
            } else {
                b.scale = parameters.add_constant(name + ".bn.weight", b.out, 1.0f);
                b.shift = parameters.add_constant(name + ".bn.bias", b.out, 0.0f);
                b.running_mean = session.allocator().allocate_array<float>(b.out, Category::weights);
                b.running_variance = session.allocator().allocate_array<float>(b.out, Category::weights);
                tbdsample::launch_fill(b.running_mean, b.out, 0.0f, session.stream());
                tbdsample::launch_fill(b.running_variance, b.out, 1.0f, session.stream());
                if (cnn.batch_norm > 0) {
                    b.bn_ex = std::make_unique<tbdsample::BatchNormEx>(handle_, b.conv_out->get(), b.bn_params->get(),
                                                                       relu_, cnn.batch_norm == 2);
                }
            }
            blocks_.push_back(std::move(b));
            channels = options_.hidden << l;
            size /= 2;
        }
        if (cnn.dropout > 0) {
            CUDNN_CHECK(cudnnCreateDropoutDescriptor(&dropout_));
            CUDNN_CHECK(cudnnDropoutGetStatesSize(handle_, &dropout_states_bytes_));
            dropout_states_ = session.allocator().allocate(dropout_states_bytes_, Category::other);
            CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout_, handle_, cnn.dropout, dropout_states_,
                                                  dropout_states_bytes_, options_.seed));
        }
        features_ = channels * size * size;
        fc_weight_ = parameters.add("fc.weight", static_cast<std::size_t>(features_) * options_.classes,
                                    std::sqrt(3.0f / static_cast<float>(features_)));
        fc_bias_ = parameters.add("fc.bias", options_.classes, 0.0f);
        if (cnn.backend) {
            // logits = pooled [1, batch, features] x W^T [1, features, classes] + bias: a matmul with a
            // pointwise ADD epilogue (W is stored [classes, features], so W^T is a transposed view).
            classifier_ = std::make_unique<tbdsample::BackendPlan>(handle_, cnn.math == 1);
            fc_in_ = classifier_->tensor({1, options_.batch, features_});
            fc_w_ = classifier_->tensor({1, features_, options_.classes});
            const int64_t product = classifier_->tensor({1, options_.batch, options_.classes}, true);
            fc_b_ = classifier_->tensor({1, 1, options_.classes});
            fc_out_ = classifier_->tensor({1, options_.batch, options_.classes});
            classifier_->matmul(fc_in_, fc_w_, product);
            classifier_->pointwise(CUDNN_POINTWISE_ADD, product, fc_b_, fc_out_);
            classifier_->finalize();
        }
    }

    ~CnnModel() override {
        for (Block& b : blocks_) {
            if (b.running_mean != nullptr) session_.allocator().release(b.running_mean);
            if (b.running_variance != nullptr) session_.allocator().release(b.running_variance);
        }
        if (dropout_ != nullptr) {
            session_.allocator().release(dropout_states_);
            cudnnDestroyDropoutDescriptor(dropout_);
        }
        cudnnDestroyActivationDescriptor(relu_);
        cudnnDestroyPoolingDescriptor(pooling_);
        cudnnDestroy(handle_);
    }

    // Per iteration: each micro-batch runs every convolution forward and backward-filter, and
    // backward-data for all but the first; batch norm 7 + 10 FLOPs per element, or (fused blocks)
    // the fused epilogue 4 and the bias gradient 1; dropout 2 + 1; ReLU and max pooling none; the
    // classifier's three GEMMs 2 * batch * classes * features each.
    double flops_per_iteration() const {
        double flops = 0;
        for (std::size_t l = 0; l < blocks_.size(); ++l) {
            const Block& b = blocks_[l];
            flops += b.conv->flops() * (l == 0 ? 2 : 3);
            const double elements = static_cast<double>(options_.batch) * b.out * b.size * b.size;
            flops += (cnn_.fused ? 5.0 : 17.0) * elements + (dropout_ != nullptr ? 3.0 * elements : 0.0);
        }
        flops += 3 * 2.0 * options_.batch * options_.classes * features_;
        if (cnn_.backend) flops += static_cast<double>(options_.batch) * options_.classes;  // the fused bias ADD
        return flops * options_.accumulate;
    }

    void train_micro_batch(const tbdsample::MicroBatch& micro_batch) override {
        const int batch = options_.batch;
        cudaStream_t stream = session_.stream();
        tbdsample::DeviceAllocator& allocator = session_.allocator();
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::TensorScope tensors(allocator);

        const std::size_t input_count = static_cast<std::size_t>(batch) * options_.input * cnn_.image * cnn_.image;
        float* images = tensors.allocate<float>(input_count, Category::input);
        int* labels = tensors.allocate<int>(batch, Category::input);
        data_.next_batch(batch, static_cast<float*>(input_stager_.host_buffer()),
                         static_cast<int*>(label_stager_.host_buffer()));
        input_stager_.copy_to(images);
        label_stager_.copy_to(labels);

        tbdsample::NvtxRange forward_range = session_.range("forward");
        std::vector<Saved> saved;
        const float* x = images;
        for (Block& b : blocks_) {
            saved.push_back(forward_block(b, x, tensors));
            x = saved.back().pooled;
        }
        float* logits =
            tensors.allocate<float>(static_cast<std::size_t>(batch) * options_.classes, Category::activations);
        if (classifier_ != nullptr) {
            classifier_->execute(allocator, {{fc_in_, const_cast<float*>(x)},
                                             {fc_w_, parameters[fc_weight_].values},
                                             {fc_b_, parameters[fc_bias_].values},
                                             {fc_out_, logits}});
        } else {
            session_.blas().gemm(false, true, batch, options_.classes, features_, x, parameters[fc_weight_].values,
                                 logits);
            tbdsample::launch_add_bias(logits, parameters[fc_bias_].values, batch, options_.classes, stream);
        }
        float* grad =
            tensors.allocate<float>(static_cast<std::size_t>(batch) * options_.classes, Category::activations);
        float* row_loss = allocator.allocate_array<float>(batch, Category::workspace);
        tbdsample::launch_softmax_cross_entropy(logits, labels, row_loss, grad, batch, options_.classes,
                                                micro_batch.loss_scale, stream);
        tbdsample::launch_sum_into(row_loss, batch, micro_batch.loss_scale, micro_batch.loss_total, stream);
        allocator.release(row_loss);
        forward_range.end();

        tbdsample::NvtxRange backward_range = session_.range("backward");
        tbdsample::GradientTarget fc_weight_grad = micro_batch.gradients.acquire(fc_weight_);
        session_.blas().gemm(true, false, options_.classes, features_, batch, grad, x, fc_weight_grad.values,
                             fc_weight_grad.beta);
        tbdsample::GradientTarget fc_bias_grad = micro_batch.gradients.acquire(fc_bias_);
        tbdsample::launch_bias_grad(grad, fc_bias_grad.values, batch, options_.classes, fc_bias_grad.beta, stream);
        float* d_pooled = tensors.allocate<float>(static_cast<std::size_t>(batch) * features_, Category::activations);
        session_.blas().gemm(false, false, batch, features_, options_.classes, grad, parameters[fc_weight_].values,
                             d_pooled);
        for (std::size_t l = blocks_.size(); l-- > 0;) {
            Block& b = blocks_[l];
            const Saved& s = saved[l];
            float* dz = backward_to_convolution(b, s, d_pooled, micro_batch, tensors);
            tbdsample::GradientTarget weight_grad = micro_batch.gradients.acquire(b.weight);
            b.conv->backward_filter(allocator, s.x, dz, weight_grad.values, weight_grad.beta);
            if (l == 0) break;  // no gradient for the input images
            d_pooled = tensors.allocate<float>(static_cast<std::size_t>(batch) * b.in * b.size * b.size,
                                               Category::activations);
            b.conv->backward_data(allocator, parameters[b.weight].values, dz, d_pooled);
        }
    }

private:
    // Convolution (with bias and ReLU fused, or followed by batch norm and ReLU), dropout, pooling.
    Saved forward_block(Block& b, const float* x, tbdsample::TensorScope& tensors) {
        const float one = 1.0f, zero = 0.0f;
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::DeviceAllocator& allocator = session_.allocator();
        const std::size_t count = static_cast<std::size_t>(options_.batch) * b.out * b.size * b.size;
        Saved s;
        s.x = x;
        if (cnn_.fused) {
            s.activated = tensors.allocate<float>(count, Category::activations);
            b.conv->forward_bias_activation(allocator, x, parameters[b.weight].values, parameters[b.bias].values,
                                            b.bn_params->get(), relu_, s.activated);
        } else {
            s.z = tensors.allocate<float>(count, Category::activations);
            b.conv->forward(allocator, x, parameters[b.weight].values, s.z);
            normalize_and_activate(b, s, tensors);
        }
        s.dropped = s.activated;
        if (dropout_ != nullptr) {
            std::size_t reserve = 0;
            CUDNN_CHECK(cudnnDropoutGetReserveSpaceSize(b.conv_out->get(), &reserve));
            s.reserve = tensors.allocate<unsigned char>(reserve, Category::activations);
            s.dropped = tensors.allocate<float>(count, Category::activations);
            CUDNN_CHECK(cudnnDropoutForward(handle_, dropout_, b.conv_out->get(), s.activated, b.conv_out->get(),
                                            s.dropped, s.reserve, reserve));
        }
        s.pooled = tensors.allocate<float>(count / 4, Category::activations);
        CUDNN_CHECK(cudnnPoolingForward(handle_, pooling_, &one, b.conv_out->get(), s.dropped, &zero, b.pooled->get(),
                                        s.pooled));
        return s;
    }

    // Batch norm (plain or Ex) and ReLU (its own call, or fused into batch norm Ex) from s.z.
    void normalize_and_activate(Block& b, Saved& s, tbdsample::TensorScope& tensors) {
        const float one = 1.0f, zero = 0.0f;
        const tbdsample::ParameterSet& parameters = session_.parameters();
        const std::size_t count = static_cast<std::size_t>(options_.batch) * b.out * b.size * b.size;
        const bool fused_relu = b.bn_ex != nullptr && b.bn_ex->fuses_relu();
        float* bn_out = tensors.allocate<float>(count, Category::activations);
        s.mean = tensors.allocate<float>(b.out, Category::activations);
        s.inv_variance = tensors.allocate<float>(b.out, Category::activations);
        if (b.bn_ex != nullptr) {
            // The reserve space carries what forward learnt (the ReLU's mask) to backward.
            if (b.bn_ex->reserve_bytes() > 0) {
                s.bn_reserve = tensors.allocate<unsigned char>(b.bn_ex->reserve_bytes(), Category::activations);
            }
            b.bn_ex->forward(session_.allocator(), s.z, bn_out, parameters[b.scale].values, parameters[b.shift].values,
                             b.running_mean, b.running_variance, s.mean, s.inv_variance, s.bn_reserve);
        } else {
            CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
                handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, b.conv_out->get(), s.z, b.conv_out->get(), bn_out,
                b.bn_params->get(), parameters[b.scale].values, parameters[b.shift].values, 0.1, b.running_mean,
                b.running_variance, tbdsample::BatchNormEx::epsilon, s.mean, s.inv_variance));
        }
        if (fused_relu) {
            s.activated = bn_out;
            return;
        }
        s.normalized = bn_out;
        s.activated = tensors.allocate<float>(count, Category::activations);
        CUDNN_CHECK(cudnnActivationForward(handle_, relu_, &one, b.conv_out->get(), s.normalized, &zero,
                                           b.conv_out->get(), s.activated));
    }

    // From the gradient of the block's pooled output to that of its convolution's output (dz), with
    // the gradients of the batch norm's scale and shift or of the fused bias on the way.
    float* backward_to_convolution(const Block& b, const Saved& s, const float* d_pooled,
                                   const tbdsample::MicroBatch& micro_batch, tbdsample::TensorScope& tensors) {
        const float one = 1.0f, zero = 0.0f;
        const std::size_t count = static_cast<std::size_t>(options_.batch) * b.out * b.size * b.size;
        cudnnTensorDescriptor_t out = b.conv_out->get();
        float* d_dropped = tensors.allocate<float>(count, Category::activations);
        CUDNN_CHECK(cudnnPoolingBackward(handle_, pooling_, &one, b.pooled->get(), s.pooled, b.pooled->get(), d_pooled,
                                         out, s.dropped, &zero, out, d_dropped));
        float* d_activated = d_dropped;
        if (dropout_ != nullptr) {
            std::size_t reserve = 0;
            CUDNN_CHECK(cudnnDropoutGetReserveSpaceSize(out, &reserve));
            d_activated = tensors.allocate<float>(count, Category::activations);
            CUDNN_CHECK(cudnnDropoutBackward(handle_, dropout_, out, d_dropped, out, d_activated, s.reserve, reserve));
        }
        // With batch norm Ex's fused ReLU, its backward takes the gradient of the activated output.
        float* d_normalized = d_activated;
        if (b.bn_ex == nullptr || !b.bn_ex->fuses_relu()) {
            d_normalized = tensors.allocate<float>(count, Category::activations);
            CUDNN_CHECK(cudnnActivationBackward(handle_, relu_, &one, out, s.activated, out, d_activated, out,
                                                cnn_.fused ? s.activated : s.normalized, &zero, out, d_normalized));
        }
        if (cnn_.fused) {
            tbdsample::GradientTarget bias_grad = micro_batch.gradients.acquire(b.bias);
            CUDNN_CHECK(cudnnConvolutionBackwardBias(handle_, &one, out, d_normalized, &bias_grad.beta,
                                                     b.bn_params->get(), bias_grad.values));
            return d_normalized;
        }
        float* dz = tensors.allocate<float>(count, Category::activations);
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::GradientTarget scale_grad = micro_batch.gradients.acquire(b.scale);
        tbdsample::GradientTarget shift_grad = micro_batch.gradients.acquire(b.shift);
        if (b.bn_ex != nullptr) {
            b.bn_ex->backward(session_.allocator(), s.z, b.bn_ex->fuses_relu() ? s.activated : s.normalized,
                              d_normalized, dz, parameters[b.scale].values, parameters[b.shift].values,
                              scale_grad.values, shift_grad.values, scale_grad.beta, s.mean, s.inv_variance,
                              s.bn_reserve);
            return dz;
        }
        CUDNN_CHECK(cudnnBatchNormalizationBackward(
            handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &scale_grad.beta, out, s.z, out, d_normalized, out, dz,
            b.bn_params->get(), parameters[b.scale].values, scale_grad.values, shift_grad.values,
            tbdsample::BatchNormEx::epsilon, s.mean, s.inv_variance));
        return dz;
    }

    tbdsample::TrainingSession& session_;
    const tbdsample::CommonOptions& options_;
    CnnOptions cnn_;
    tbdsample::SyntheticClassification data_;
    tbdsample::InputStager input_stager_;
    tbdsample::InputStager label_stager_;
    cudnnHandle_t handle_ = nullptr;
    cudnnPoolingDescriptor_t pooling_ = nullptr;
    cudnnActivationDescriptor_t relu_ = nullptr;
    std::vector<Block> blocks_;
    int features_ = 0;
    cudnnDropoutDescriptor_t dropout_ = nullptr;
    void* dropout_states_ = nullptr;
    std::size_t dropout_states_bytes_ = 0;
    std::unique_ptr<tbdsample::BackendPlan> classifier_;
    int64_t fc_in_ = 0, fc_w_ = 0, fc_b_ = 0, fc_out_ = 0;
    std::size_t fc_weight_ = 0, fc_bias_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    tbdsample::CommonOptions options;
    options.batch = 16;
    options.hidden = 16;
    options.layers = 2;
    options.input = 3;
    CnnOptions cnn;
    tbdsample::OptionParser parser("cnn_train",
                                   "Trains a convolutional classifier (cuDNN convolution, batch norm, ReLU, pooling; "
                                   "cuBLAS classifier) on synthetic images. --input is the image channels, --hidden "
                                   "the first block's channels, --layers the blocks.");
    tbdsample::add_common_options(parser, options);
    parser.add_int("image", &cnn.image, 2, 512, "image height and width (divisible by 2^layers)");
    parser.add_choice(
        "math", {"fma", "tf32"}, 0, [&](int index) { cnn.math = index; },
        "convolution math: fma (CUDNN_FMA_MATH, FP32) or tf32 (CUDNN_DEFAULT_MATH, TF32 allowed)");
    parser.add_choice(
        "api", {"legacy", "backend"}, 0, [&](int index) { cnn.backend = index == 1; },
        "cuDNN API: legacy (cudnnConvolutionForward...) or backend (graphs: convolutions, and the "
        "classifier's forward as a matmul with a bias epilogue)");
    parser.add_choice(
        "block", {"bn", "fused"}, 0, [&](int index) { cnn.fused = index == 1; },
        "block: bn (convolution, batch norm, ReLU) or fused (cudnnConvolutionBiasActivationForward: "
        "convolution with bias and ReLU in one call)");
    parser.add_choice(
        "batch-norm", {"plain", "ex", "ex-relu"}, 0, [&](int index) { cnn.batch_norm = index; },
        "batch norm calls: plain (cudnnBatchNormalizationForwardTraining...), ex (the Ex API with its workspace "
        "and reserve space) or ex-relu (the Ex API with the ReLU fused: CUDNN_BATCHNORM_OPS_BN_ACTIVATION)");
    parser.add_float("dropout", &cnn.dropout, 0.0f, 0.99f, "cuDNN dropout rate after each block's ReLU (0: none)");
    parser.parse(argc, argv);
    if (cnn.image % (1 << options.layers) != 0) parser.usage_error("--image must be divisible by 2^layers");
    if (cnn.fused && cnn.backend) parser.usage_error("--block fused uses the legacy API (--api legacy)");
    if (cnn.fused && cnn.batch_norm > 0) parser.usage_error("--block fused has no batch norm (--batch-norm plain)");

    tbdsample::TrainingSession session("cnn_train", options);
    CnnModel model(session, cnn);
    std::printf("cnn_train: flops_per_iteration=%.17g\n", model.flops_per_iteration());
    return session.run(model);
}
