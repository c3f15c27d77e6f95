// The element-wise and per-row work of the attention sample: layer normalisation, the head
// split/merge permutations that make the per-head matrices evenly strided for the batched GEMMs,
// the row softmax of the attention scores and its backward, and mean pooling over the sequence.
// Layout: row-major; a token is a row of [batch * seq_len, model_dim], and a head's slice of a token
// is `head_dim` consecutive columns (model_dim = heads * head_dim).
#pragma once

#include <cuda_runtime_api.h>

namespace attention {

// y = (x - mean) * rstd * gamma + beta per row; saves each row's mean and rstd for backward.
void launch_layer_norm_forward(const float* x, const float* gamma, const float* beta, float* y,
                               float* row_mean, float* row_rstd, int rows, int cols, cudaStream_t stream);

// d(loss)/dx of layer norm from dy and what forward saved.
void launch_layer_norm_backward_input(const float* dy, const float* x, const float* row_mean,
                                      const float* row_rstd, const float* gamma, float* dx, int rows,
                                      int cols, cudaStream_t stream);

// dgamma = accumulate * dgamma + sum_rows dy * xhat; dbeta likewise with sum_rows dy
// (accumulate is 0 for the first write of a step, 1 after).
void launch_layer_norm_backward_params(const float* dy, const float* x, const float* row_mean,
                                       const float* row_rstd, float* dgamma, float* dbeta, float accumulate,
                                       int rows, int cols, cudaStream_t stream);

// [batch, seq, heads, head_dim] -> [batch, heads, seq, head_dim]: each (sample, head) becomes one
// contiguous [seq, head_dim] matrix, so batch * heads matrices sit a constant stride apart.
void launch_split_heads(const float* tokens, float* per_head, int batch, int seq, int heads, int head_dim,
                        cudaStream_t stream);

// The inverse of split_heads.
void launch_merge_heads(const float* per_head, float* tokens, int batch, int seq, int heads, int head_dim,
                        cudaStream_t stream);

// probabilities = softmax(scores) over each row of `cols` entries.
void launch_softmax_rows(const float* scores, float* probabilities, int rows, int cols, cudaStream_t stream);

// grad_scores = P * (grad_probabilities - sum_j grad_probabilities * P), row by row.
void launch_softmax_rows_backward(const float* probabilities, const float* grad_probabilities,
                                  float* grad_scores, int rows, int cols, cudaStream_t stream);

// pooled[b, :] = mean over the sequence of tokens[b, s, :].
void launch_mean_pool(const float* tokens, float* pooled, int batch, int seq, int cols, cudaStream_t stream);

// grad_tokens[b, s, :] = grad_pooled[b, :] / seq.
void launch_mean_pool_backward(const float* grad_pooled, float* grad_tokens, int batch, int seq, int cols,
                               cudaStream_t stream);

}  // namespace attention
