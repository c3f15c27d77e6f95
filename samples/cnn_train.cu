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
// Before the summary the program prints `cnn_train: flops_per_iteration=F`, the FLOPs one iteration
// must have by the counting rules of docs/simgpu-cudnn.md, computed from the network's shapes.
#include <cublas_v2.h>
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <memory>
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

struct CnnOptions {
    int image = 16;
    int math = 0;          // 0: fma (FP32), 1: tf32 (CUDNN_DEFAULT_MATH: TF32 tensor cores allowed)
    bool backend = false;  // --api backend: convolutions and the classifier's forward as backend graphs
};

struct Block {
    int in, out, size;  // channels in/out, input height = width
    std::unique_ptr<tbdsample::ConvLayer> conv;
    std::unique_ptr<tbdsample::TensorDesc> conv_out, bn_params, pooled;
    std::size_t weight, scale, shift;  // parameter indices
    float* running_mean = nullptr;
    float* running_variance = nullptr;
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
            b.scale = parameters.add_constant(name + ".bn.weight", b.out, 1.0f);
            b.shift = parameters.add_constant(name + ".bn.bias", b.out, 0.0f);
            b.running_mean = session.allocator().allocate_array<float>(b.out, Category::weights);
            b.running_variance = session.allocator().allocate_array<float>(b.out, Category::weights);
            tbdsample::launch_fill(b.running_mean, b.out, 0.0f, session.stream());
            tbdsample::launch_fill(b.running_variance, b.out, 1.0f, session.stream());
            blocks_.push_back(std::move(b));
            channels = options_.hidden << l;
            size /= 2;
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
            session_.allocator().release(b.running_mean);
            session_.allocator().release(b.running_variance);
        }
        cudnnDestroyActivationDescriptor(relu_);
        cudnnDestroyPoolingDescriptor(pooling_);
        cudnnDestroy(handle_);
    }

    // Per iteration: each micro-batch runs every convolution forward and backward-filter, and
    // backward-data for all but the first; batch norm 7 + 10 FLOPs per element; ReLU and max
    // pooling none; the classifier's three GEMMs 2 * batch * classes * features each.
    double flops_per_iteration() const {
        double flops = 0;
        for (std::size_t l = 0; l < blocks_.size(); ++l) {
            const Block& b = blocks_[l];
            flops += b.conv->flops() * (l == 0 ? 2 : 3);
            flops += 17.0 * options_.batch * b.out * b.size * b.size;
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
        const float one = 1.0f, zero = 0.0f;

        const std::size_t input_count = static_cast<std::size_t>(batch) * options_.input * cnn_.image * cnn_.image;
        float* images = tensors.allocate<float>(input_count, Category::input);
        int* labels = tensors.allocate<int>(batch, Category::input);
        data_.next_batch(batch, static_cast<float*>(input_stager_.host_buffer()),
                         static_cast<int*>(label_stager_.host_buffer()));
        input_stager_.copy_to(images);
        label_stager_.copy_to(labels);

        tbdsample::NvtxRange forward_range = session_.range("forward");
        struct Saved {
            const float* x = nullptr;
            float *z = nullptr, *normalized = nullptr, *activated = nullptr, *pooled = nullptr, *mean = nullptr,
                  *inv_variance = nullptr;
        };
        std::vector<Saved> saved;
        const float* x = images;
        for (Block& b : blocks_) {
            const std::size_t count = static_cast<std::size_t>(batch) * b.out * b.size * b.size;
            Saved s;
            s.x = x;
            s.z = tensors.allocate<float>(count, Category::activations);
            b.conv->forward(allocator, x, parameters[b.weight].values, s.z);
            s.normalized = tensors.allocate<float>(count, Category::activations);
            s.mean = tensors.allocate<float>(b.out, Category::activations);
            s.inv_variance = tensors.allocate<float>(b.out, Category::activations);
            CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
                handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, b.conv_out->get(), s.z, b.conv_out->get(), s.normalized,
                b.bn_params->get(), parameters[b.scale].values, parameters[b.shift].values, 0.1, b.running_mean,
                b.running_variance, CUDNN_BN_MIN_EPSILON * 10, s.mean, s.inv_variance));
            s.activated = tensors.allocate<float>(count, Category::activations);
            CUDNN_CHECK(cudnnActivationForward(handle_, relu_, &one, b.conv_out->get(), s.normalized, &zero,
                                               b.conv_out->get(), s.activated));
            s.pooled = tensors.allocate<float>(count / 4, Category::activations);
            CUDNN_CHECK(cudnnPoolingForward(handle_, pooling_, &one, b.conv_out->get(), s.activated, &zero,
                                            b.pooled->get(), s.pooled));
            saved.push_back(s);
            x = s.pooled;
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
            const std::size_t count = static_cast<std::size_t>(batch) * b.out * b.size * b.size;
            float* d_activated = tensors.allocate<float>(count, Category::activations);
            CUDNN_CHECK(cudnnPoolingBackward(handle_, pooling_, &one, b.pooled->get(), s.pooled, b.pooled->get(),
                                             d_pooled, b.conv_out->get(), s.activated, &zero, b.conv_out->get(),
                                             d_activated));
            float* d_normalized = tensors.allocate<float>(count, Category::activations);
            CUDNN_CHECK(cudnnActivationBackward(handle_, relu_, &one, b.conv_out->get(), s.activated, b.conv_out->get(),
                                                d_activated, b.conv_out->get(), s.normalized, &zero, b.conv_out->get(),
                                                d_normalized));
            float* dz = tensors.allocate<float>(count, Category::activations);
            tbdsample::GradientTarget scale_grad = micro_batch.gradients.acquire(b.scale);
            tbdsample::GradientTarget shift_grad = micro_batch.gradients.acquire(b.shift);
            CUDNN_CHECK(cudnnBatchNormalizationBackward(
                handle_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &scale_grad.beta, b.conv_out->get(), s.z,
                b.conv_out->get(), d_normalized, b.conv_out->get(), dz, b.bn_params->get(), parameters[b.scale].values,
                scale_grad.values, shift_grad.values, CUDNN_BN_MIN_EPSILON * 10, s.mean, s.inv_variance));
            tbdsample::GradientTarget weight_grad = micro_batch.gradients.acquire(b.weight);
            b.conv->backward_filter(allocator, s.x, dz, weight_grad.values, weight_grad.beta);
            if (l == 0) break;  // no gradient for the input images
            d_pooled = tensors.allocate<float>(static_cast<std::size_t>(batch) * b.in * b.size * b.size,
                                               Category::activations);
            b.conv->backward_data(allocator, parameters[b.weight].values, dz, d_pooled);
        }
    }

private:
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
    parser.parse(argc, argv);
    if (cnn.image % (1 << options.layers) != 0) parser.usage_error("--image must be divisible by 2^layers");

    tbdsample::TrainingSession session("cnn_train", options);
    CnnModel model(session, cnn);
    std::printf("cnn_train: flops_per_iteration=%.17g\n", model.flops_per_iteration());
    return session.run(model);
}
