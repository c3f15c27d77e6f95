// Element-wise and reduction kernels shared by the training samples, each behind a host function
// that launches it on a stream and checks the launch. Layout: row-major [rows, cols] matrices.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tbdsample {

// Deterministic uniform values in [-scale, scale) from (seed, index): no host copy, so weights are
// never the destination of a host-to-device transfer (that signature belongs to inputs).
void launch_init_uniform(float* values, std::size_t count, float scale, std::uint64_t seed,
                         cudaStream_t stream);

// values[i] = value (constant initialisation, e.g. a layer-norm gain of 1)
void launch_fill(float* values, std::size_t count, float value, cudaStream_t stream);

// destination[i] += source[i]   (residual connections and their gradients)
void launch_add_into(float* destination, const float* source, std::size_t count, cudaStream_t stream);

// values[r, c] += bias[c]
void launch_add_bias(float* values, const float* bias, int rows, int cols, cudaStream_t stream);

// out = max(in, 0)
void launch_relu_forward(const float* in, float* out, std::size_t count, cudaStream_t stream);

// grad_in = grad_out where pre_activation > 0, else 0
void launch_relu_backward(const float* grad_out, const float* pre_activation, float* grad_in,
                          std::size_t count, cudaStream_t stream);

// bias_grad[c] = beta * bias_grad[c] + sum over rows of grad[r, c]   (beta is 0 or 1)
void launch_bias_grad(const float* grad, float* bias_grad, int rows, int cols, float beta,
                      cudaStream_t stream);

// Softmax over each row of logits and cross-entropy against integer labels. Writes each row's loss
// to row_loss and d(loss)/d(logits) * grad_scale to grad_logits.
void launch_softmax_cross_entropy(const float* logits, const int* labels, float* row_loss,
                                  float* grad_logits, int rows, int classes, float grad_scale,
                                  cudaStream_t stream);

// *total += scale * sum(values)   (one block; totals are small: one value per sample)
void launch_sum_into(const float* values, std::size_t count, float scale, float* total,
                     cudaStream_t stream);

// SGD with momentum: velocity = momentum * velocity + grad; weights -= lr * velocity.
void launch_sgd_momentum(float* weights, const float* grad, float* velocity, std::size_t count,
                         float learning_rate, float momentum, cudaStream_t stream);

// Plain SGD: weights -= lr * grad.
void launch_sgd(float* weights, const float* grad, std::size_t count, float learning_rate,
                cudaStream_t stream);

// Adam. bias_correction1/2 = 1 - beta1^t, 1 - beta2^t for step t (computed on the host).
struct AdamHyper {
    float learning_rate;
    float beta1;
    float beta2;
    float epsilon;
    float bias_correction1;
    float bias_correction2;
};
void launch_adam(float* weights, const float* grad, float* first_moment, float* second_moment,
                 std::size_t count, const AdamHyper& hyper, cudaStream_t stream);

// Grid size for a grid-stride loop over `count` elements with 256-thread blocks.
unsigned int grid_for(std::size_t count);

}  // namespace tbdsample
