#include "kernels.h"

#include "check.h"

#include <cmath>

namespace tbdsample {
namespace {

constexpr unsigned int kBlock = 256;

__device__ inline std::uint64_t mix64(std::uint64_t x) {
    // splitmix64 finalizer: a well-known bijective mixer, good enough for initial weights.
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

__global__ void init_uniform_kernel(float* values, std::size_t count, float scale, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::uint64_t bits = mix64(seed * 0x100000001b3ULL + i);
        float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1)
        values[i] = (2.0f * unit - 1.0f) * scale;
    }
}

__global__ void fill_kernel(float* values, std::size_t count, float value) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        values[i] = value;
}

__global__ void add_into_kernel(float* destination, const float* source, std::size_t count) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        destination[i] += source[i];
}

__global__ void add_bias_kernel(float* values, const float* bias, int rows, int cols) {
    std::size_t count = static_cast<std::size_t>(rows) * cols;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        values[i] += bias[i % cols];
}

__global__ void relu_forward_kernel(const float* in, float* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

__global__ void relu_backward_kernel(const float* grad_out, const float* pre, float* grad_in,
                                     std::size_t count) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        grad_in[i] = pre[i] > 0.0f ? grad_out[i] : 0.0f;
}

// One thread per column: neighbouring threads read neighbouring addresses of each row (coalesced).
__global__ void bias_grad_kernel(const float* grad, float* bias_grad, int rows, int cols, float beta) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float sum = 0.0f;
    for (int row = 0; row < rows; ++row) sum += grad[static_cast<std::size_t>(row) * cols + col];
    bias_grad[col] = (beta != 0.0f ? beta * bias_grad[col] : 0.0f) + sum;
}

// One thread per row: the class count of the samples is small.
__global__ void softmax_cross_entropy_kernel(const float* logits, const int* labels, float* row_loss,
                                             float* grad_logits, int rows, int classes, float grad_scale) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* z = logits + static_cast<std::size_t>(row) * classes;
    float* dz = grad_logits + static_cast<std::size_t>(row) * classes;
    float max_logit = z[0];
    for (int c = 1; c < classes; ++c) max_logit = fmaxf(max_logit, z[c]);
    float denominator = 0.0f;
    for (int c = 0; c < classes; ++c) denominator += expf(z[c] - max_logit);
    int label = labels[row];
    float log_denominator = logf(denominator);
    row_loss[row] = log_denominator - (z[label] - max_logit);
    for (int c = 0; c < classes; ++c) {
        float probability = expf(z[c] - max_logit - log_denominator);
        dz[c] = (probability - (c == label ? 1.0f : 0.0f)) * grad_scale;
    }
}

__global__ void sum_into_kernel(const float* values, std::size_t count, float scale, float* total) {
    __shared__ float partial[kBlock];
    float sum = 0.0f;
    for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) sum += values[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *total += scale * partial[0];
}

__global__ void sgd_momentum_kernel(float* weights, const float* grad, float* velocity,
                                    std::size_t count, float learning_rate, float momentum) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float v = momentum * velocity[i] + grad[i];
        velocity[i] = v;
        weights[i] -= learning_rate * v;
    }
}

__global__ void sgd_kernel(float* weights, const float* grad, std::size_t count, float learning_rate) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        weights[i] -= learning_rate * grad[i];
}

__global__ void adam_kernel(float* weights, const float* grad, float* m, float* v, std::size_t count,
                            AdamHyper hyper) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float g = grad[i];
        float m_new = hyper.beta1 * m[i] + (1.0f - hyper.beta1) * g;
        float v_new = hyper.beta2 * v[i] + (1.0f - hyper.beta2) * g * g;
        m[i] = m_new;
        v[i] = v_new;
        float m_hat = m_new / hyper.bias_correction1;
        float v_hat = v_new / hyper.bias_correction2;
        weights[i] -= hyper.learning_rate * m_hat / (sqrtf(v_hat) + hyper.epsilon);
    }
}

}  // namespace

unsigned int grid_for(std::size_t count) {
    std::size_t blocks = (count + kBlock - 1) / kBlock;
    if (blocks == 0) blocks = 1;
    if (blocks > 4096) blocks = 4096;  // grid-stride loops cover the rest
    return static_cast<unsigned int>(blocks);
}

void launch_init_uniform(float* values, std::size_t count, float scale, std::uint64_t seed,
                         cudaStream_t stream) {
    init_uniform_kernel<<<grid_for(count), kBlock, 0, stream>>>(values, count, scale, seed);
    CUDA_CHECK_LAUNCH();
}

void launch_fill(float* values, std::size_t count, float value, cudaStream_t stream) {
    fill_kernel<<<grid_for(count), kBlock, 0, stream>>>(values, count, value);
    CUDA_CHECK_LAUNCH();
}

void launch_add_into(float* destination, const float* source, std::size_t count, cudaStream_t stream) {
    add_into_kernel<<<grid_for(count), kBlock, 0, stream>>>(destination, source, count);
    CUDA_CHECK_LAUNCH();
}

void launch_add_bias(float* values, const float* bias, int rows, int cols, cudaStream_t stream) {
    std::size_t count = static_cast<std::size_t>(rows) * cols;
    add_bias_kernel<<<grid_for(count), kBlock, 0, stream>>>(values, bias, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_relu_forward(const float* in, float* out, std::size_t count, cudaStream_t stream) {
    relu_forward_kernel<<<grid_for(count), kBlock, 0, stream>>>(in, out, count);
    CUDA_CHECK_LAUNCH();
}

void launch_relu_backward(const float* grad_out, const float* pre_activation, float* grad_in,
                          std::size_t count, cudaStream_t stream) {
    relu_backward_kernel<<<grid_for(count), kBlock, 0, stream>>>(grad_out, pre_activation, grad_in, count);
    CUDA_CHECK_LAUNCH();
}

void launch_bias_grad(const float* grad, float* bias_grad, int rows, int cols, float beta,
                      cudaStream_t stream) {
    bias_grad_kernel<<<(cols + kBlock - 1) / kBlock, kBlock, 0, stream>>>(grad, bias_grad, rows, cols, beta);
    CUDA_CHECK_LAUNCH();
}

void launch_softmax_cross_entropy(const float* logits, const int* labels, float* row_loss,
                                  float* grad_logits, int rows, int classes, float grad_scale,
                                  cudaStream_t stream) {
    softmax_cross_entropy_kernel<<<(rows + kBlock - 1) / kBlock, kBlock, 0, stream>>>(
        logits, labels, row_loss, grad_logits, rows, classes, grad_scale);
    CUDA_CHECK_LAUNCH();
}

void launch_sum_into(const float* values, std::size_t count, float scale, float* total,
                     cudaStream_t stream) {
    sum_into_kernel<<<1, kBlock, 0, stream>>>(values, count, scale, total);
    CUDA_CHECK_LAUNCH();
}

void launch_sgd_momentum(float* weights, const float* grad, float* velocity, std::size_t count,
                         float learning_rate, float momentum, cudaStream_t stream) {
    sgd_momentum_kernel<<<grid_for(count), kBlock, 0, stream>>>(weights, grad, velocity, count,
                                                                learning_rate, momentum);
    CUDA_CHECK_LAUNCH();
}

void launch_sgd(float* weights, const float* grad, std::size_t count, float learning_rate,
                cudaStream_t stream) {
    sgd_kernel<<<grid_for(count), kBlock, 0, stream>>>(weights, grad, count, learning_rate);
    CUDA_CHECK_LAUNCH();
}

void launch_adam(float* weights, const float* grad, float* first_moment, float* second_moment,
                 std::size_t count, const AdamHyper& hyper, cudaStream_t stream) {
    adam_kernel<<<grid_for(count), kBlock, 0, stream>>>(weights, grad, first_moment, second_moment,
                                                        count, hyper);
    CUDA_CHECK_LAUNCH();
}

}  // namespace tbdsample
