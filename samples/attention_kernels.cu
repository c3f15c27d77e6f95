#include "attention_kernels.h"

#include "common/check.h"
#include "common/kernels.h"

#include <cstddef>

namespace attention {
namespace {

constexpr unsigned int kBlock = 256;
constexpr unsigned int kWarp = 32;
constexpr unsigned int kRowsPerBlock = kBlock / kWarp;
constexpr float kLayerNormEpsilon = 1e-5f;

// Row-wise kernels give each row one warp: the lanes stride along the row (coalesced reads) and
// combine their partial sums with shuffles, so no shared memory or second pass is needed.
__device__ inline float warp_sum(float value) {
    for (unsigned int offset = kWarp / 2; offset > 0; offset /= 2)
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

__device__ inline float warp_max(float value) {
    for (unsigned int offset = kWarp / 2; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
    return value;
}

__device__ inline int warp_row() { return static_cast<int>(blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp); }
__device__ inline int lane() { return static_cast<int>(threadIdx.x % kWarp); }

unsigned int row_blocks(int rows) { return (static_cast<unsigned int>(rows) + kRowsPerBlock - 1) / kRowsPerBlock; }

__global__ void layer_norm_forward_kernel(const float* x, const float* gamma, const float* beta, float* y,
                                          float* row_mean, float* row_rstd, int rows, int cols) {
    int row = warp_row();
    if (row >= rows) return;  // whole warps leave together: rows never straddle a warp
    const float* in = x + static_cast<std::size_t>(row) * cols;
    float* out = y + static_cast<std::size_t>(row) * cols;
    float sum = 0.0f;
    for (int c = lane(); c < cols; c += kWarp) sum += in[c];
    float mean = warp_sum(sum) / static_cast<float>(cols);
    float squares = 0.0f;
    for (int c = lane(); c < cols; c += kWarp) squares += (in[c] - mean) * (in[c] - mean);
    float rstd = rsqrtf(warp_sum(squares) / static_cast<float>(cols) + kLayerNormEpsilon);
    for (int c = lane(); c < cols; c += kWarp) out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    if (lane() == 0) {
        row_mean[row] = mean;
        row_rstd[row] = rstd;
    }
}

__global__ void layer_norm_backward_input_kernel(const float* dy, const float* x, const float* row_mean,
                                                 const float* row_rstd, const float* gamma, float* dx, int rows,
                                                 int cols) {
    int row = warp_row();
    if (row >= rows) return;
    const std::size_t base = static_cast<std::size_t>(row) * cols;
    const float mean = row_mean[row];
    const float rstd = row_rstd[row];
    // With g = dy * gamma and xhat the normalised input: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
    float sum_g = 0.0f;
    float sum_g_xhat = 0.0f;
    for (int c = lane(); c < cols; c += kWarp) {
        float g = dy[base + c] * gamma[c];
        sum_g += g;
        sum_g_xhat += g * (x[base + c] - mean) * rstd;
    }
    float mean_g = warp_sum(sum_g) / static_cast<float>(cols);
    float mean_g_xhat = warp_sum(sum_g_xhat) / static_cast<float>(cols);
    for (int c = lane(); c < cols; c += kWarp) {
        float xhat = (x[base + c] - mean) * rstd;
        dx[base + c] = rstd * (dy[base + c] * gamma[c] - mean_g - xhat * mean_g_xhat);
    }
}

// One thread per column, like the common bias-gradient reduction.
__global__ void layer_norm_backward_params_kernel(const float* dy, const float* x, const float* row_mean,
                                                  const float* row_rstd, float* dgamma, float* dbeta,
                                                  float accumulate, int rows, int cols) {
    int col = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (col >= cols) return;
    float sum_gamma = 0.0f;
    float sum_beta = 0.0f;
    for (int row = 0; row < rows; ++row) {
        std::size_t i = static_cast<std::size_t>(row) * cols + col;
        sum_gamma += dy[i] * (x[i] - row_mean[row]) * row_rstd[row];
        sum_beta += dy[i];
    }
    dgamma[col] = (accumulate != 0.0f ? dgamma[col] : 0.0f) + sum_gamma;
    dbeta[col] = (accumulate != 0.0f ? dbeta[col] : 0.0f) + sum_beta;
}

// One thread per element of the output; `to_heads` picks the direction of the permutation.
__global__ void permute_heads_kernel(const float* in, float* out, int batch, int seq, int heads, int head_dim,
                                     bool to_heads) {
    std::size_t count = static_cast<std::size_t>(batch) * seq * heads * head_dim;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        // i indexes the token-major layout [b, s, h, d].
        std::size_t d = i % head_dim;
        std::size_t h = (i / head_dim) % heads;
        std::size_t s = (i / (static_cast<std::size_t>(head_dim) * heads)) % seq;
        std::size_t b = i / (static_cast<std::size_t>(head_dim) * heads * seq);
        std::size_t j = ((b * heads + h) * seq + s) * head_dim + d;  // head-major [b, h, s, d]
        if (to_heads)
            out[j] = in[i];
        else
            out[i] = in[j];
    }
}

__global__ void softmax_rows_kernel(const float* scores, float* probabilities, int rows, int cols) {
    int row = warp_row();
    if (row >= rows) return;
    const float* in = scores + static_cast<std::size_t>(row) * cols;
    float* out = probabilities + static_cast<std::size_t>(row) * cols;
    float row_max = -3.402823466e38f;
    for (int c = lane(); c < cols; c += kWarp) row_max = fmaxf(row_max, in[c]);
    row_max = warp_max(row_max);
    float denominator = 0.0f;
    for (int c = lane(); c < cols; c += kWarp) denominator += expf(in[c] - row_max);
    float inverse = 1.0f / warp_sum(denominator);
    for (int c = lane(); c < cols; c += kWarp) out[c] = expf(in[c] - row_max) * inverse;
}

__global__ void softmax_rows_backward_kernel(const float* probabilities, const float* grad_probabilities,
                                             float* grad_scores, int rows, int cols) {
    int row = warp_row();
    if (row >= rows) return;
    const std::size_t base = static_cast<std::size_t>(row) * cols;
    float dot = 0.0f;
    for (int c = lane(); c < cols; c += kWarp) dot += grad_probabilities[base + c] * probabilities[base + c];
    dot = warp_sum(dot);
    for (int c = lane(); c < cols; c += kWarp)
        grad_scores[base + c] = probabilities[base + c] * (grad_probabilities[base + c] - dot);
}

// One thread per (sample, column): walks down the sequence.
__global__ void mean_pool_kernel(const float* tokens, float* pooled, int batch, int seq, int cols) {
    int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (index >= batch * cols) return;
    int b = index / cols;
    int c = index % cols;
    float sum = 0.0f;
    for (int s = 0; s < seq; ++s) sum += tokens[(static_cast<std::size_t>(b) * seq + s) * cols + c];
    pooled[index] = sum / static_cast<float>(seq);
}

__global__ void mean_pool_backward_kernel(const float* grad_pooled, float* grad_tokens, int batch, int seq,
                                          int cols) {
    std::size_t count = static_cast<std::size_t>(batch) * seq * cols;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        std::size_t c = i % cols;
        std::size_t b = i / (static_cast<std::size_t>(seq) * cols);
        grad_tokens[i] = grad_pooled[b * cols + c] / static_cast<float>(seq);
    }
}

}  // namespace

void launch_layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y,
                               float* row_mean, float* row_rstd, int rows, int cols, cudaStream_t stream) {
    layer_norm_forward_kernel<<<row_blocks(rows), kBlock, 0, stream>>>(x, gamma, beta, y, row_mean, row_rstd,
                                                                       rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_layer_norm_backward_input(const float* dy, const float* x, const float* row_mean,
                                      const float* row_rstd, const float* gamma, float* dx, int rows, int cols,
                                      cudaStream_t stream) {
    layer_norm_backward_input_kernel<<<row_blocks(rows), kBlock, 0, stream>>>(dy, x, row_mean, row_rstd, gamma,
                                                                              dx, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_layer_norm_backward_params(const float* dy, const float* x, const float* row_mean,
                                       const float* row_rstd, float* dgamma, float* dbeta, float accumulate,
                                       int rows, int cols, cudaStream_t stream) {
    unsigned int blocks = (static_cast<unsigned int>(cols) + kBlock - 1) / kBlock;
    layer_norm_backward_params_kernel<<<blocks, kBlock, 0, stream>>>(dy, x, row_mean, row_rstd, dgamma, dbeta,
                                                                     accumulate, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_split_heads(const float* tokens, float* per_head, int batch, int seq, int heads, int head_dim,
                        cudaStream_t stream) {
    std::size_t count = static_cast<std::size_t>(batch) * seq * heads * head_dim;
    permute_heads_kernel<<<tbdsample::grid_for(count), kBlock, 0, stream>>>(tokens, per_head, batch, seq, heads,
                                                                            head_dim, true);
    CUDA_CHECK_LAUNCH();
}

void launch_merge_heads(const float* per_head, float* tokens, int batch, int seq, int heads, int head_dim,
                        cudaStream_t stream) {
    std::size_t count = static_cast<std::size_t>(batch) * seq * heads * head_dim;
    permute_heads_kernel<<<tbdsample::grid_for(count), kBlock, 0, stream>>>(per_head, tokens, batch, seq, heads,
                                                                            head_dim, false);
    CUDA_CHECK_LAUNCH();
}

void launch_softmax_rows(const float* scores, float* probabilities, int rows, int cols, cudaStream_t stream) {
    softmax_rows_kernel<<<row_blocks(rows), kBlock, 0, stream>>>(scores, probabilities, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_softmax_rows_backward(const float* probabilities, const float* grad_probabilities, float* grad_scores,
                                  int rows, int cols, cudaStream_t stream) {
    softmax_rows_backward_kernel<<<row_blocks(rows), kBlock, 0, stream>>>(probabilities, grad_probabilities,
                                                                          grad_scores, rows, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_mean_pool(const float* tokens, float* pooled, int batch, int seq, int cols, cudaStream_t stream) {
    unsigned int blocks = (static_cast<unsigned int>(batch * cols) + kBlock - 1) / kBlock;
    mean_pool_kernel<<<blocks, kBlock, 0, stream>>>(tokens, pooled, batch, seq, cols);
    CUDA_CHECK_LAUNCH();
}

void launch_mean_pool_backward(const float* grad_pooled, float* grad_tokens, int batch, int seq, int cols,
                               cudaStream_t stream) {
    std::size_t count = static_cast<std::size_t>(batch) * seq * cols;
    mean_pool_backward_kernel<<<tbdsample::grid_for(count), kBlock, 0, stream>>>(grad_pooled, grad_tokens, batch,
                                                                                 seq, cols);
    CUDA_CHECK_LAUNCH();
}

}  // namespace attention
