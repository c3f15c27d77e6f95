// Operations of transformer_temps_train. Every kernel takes one argument struct by value (pointers
// and sizes inside), the way TensorIterator-style frameworks pass their operands: a trace sees
// pointer values in the argument words but no const-ness in the mangled name.
#pragma once

#include <cuda_runtime.h>

namespace tt {

struct FillArgs {
    float* out;
    long n;
    unsigned seed;
    float scale, offset;  // out = offset + scale * uniform(-1, 1) (scale 0: constant)
};
struct EmbeddingArgs {
    const int* tokens;
    const float* table;     // [V, C]
    const float* position;  // [T, C]
    float* out;             // [B*T, C]
    int rows, seq, channels;
};
struct EmbeddingBackwardArgs {
    const int* tokens;
    const float* dout;
    float* dtable;     // written whole
    float* dposition;  // written whole
    int rows, seq, channels, vocab;
};
struct BiasArgs {
    float* out;
    const float* bias;
    int rows, cols;
};
// Partial column sums of `in` over blocks of `rows_per_block` rows into partial[block, col].
struct PartialColumnSumArgs {
    const float* in;
    float* partial;
    int rows, cols, rows_per_block;
};
// out[col] = sum over blocks of partial[block, col] (written whole).
struct ReduceArgs {
    const float* partial;
    float* out;
    int blocks, cols;
};
struct LayerNormArgs {
    const float* x;
    const float* gamma;
    const float* beta;
    float* y;
    float* mean;
    float* rstd;
    int rows, cols;
};
// dx (written whole) and per-block partial sums of dgamma, dbeta.
struct LayerNormBackwardArgs {
    const float* dy;
    const float* x;
    const float* gamma;
    const float* mean;
    const float* rstd;
    float* dx;
    float* partial_dgamma;
    float* partial_dbeta;
    int rows, cols, rows_per_block;
};
struct ElementwiseArgs {
    const float* a;
    const float* b;
    float* out;
    long n;
};
// Copies between token-major [B, T, width] (columns [offset, offset + C)) and head-major
// [B * H, T, C / H] packed operands.
struct PackArgs {
    const float* in;
    float* out;
    int batch, seq, heads, channels, width, offset;
};
struct SoftmaxArgs {
    float* inout;  // rows of `cols`, scaled and causally masked, in place
    int rows, cols;
    float scale;
};
struct SoftmaxBackwardArgs {
    const float* probs;
    float* inout;  // dP in, dS out
    int rows, cols;
};
struct MeanPoolArgs {
    const float* in;  // [B, T, C]
    float* out;       // [B, C]
    int batch, seq, channels;
};
struct MeanPoolBackwardArgs {
    const float* dout;  // [B, C]
    float* din;         // [B, T, C]
    int batch, seq, channels;
};
struct CrossEntropyArgs {
    const float* logits;
    const int* labels;
    float* losses;   // [B]
    float* dlogits;  // [B, K], null for validation
    int batch, classes;
};
struct SumArgs {
    const float* in;
    float* out;  // one float
    int n;
};
struct SgdArgs {
    float* param;
    const float* grad;
    float* momentum_buffer;
    long n;
    float lr, momentum, weight_decay;
    int first;  // the buffer starts as the gradient
};

void fill(cudaStream_t s, FillArgs a);
void embedding(cudaStream_t s, EmbeddingArgs a);
void embedding_backward(cudaStream_t s, EmbeddingBackwardArgs a);
void add_bias(cudaStream_t s, BiasArgs a);
void partial_column_sum(cudaStream_t s, PartialColumnSumArgs a);
void reduce_partials(cudaStream_t s, ReduceArgs a);
void layernorm(cudaStream_t s, LayerNormArgs a);
void layernorm_backward(cudaStream_t s, LayerNormBackwardArgs a);
void add(cudaStream_t s, ElementwiseArgs a);
void gelu(cudaStream_t s, ElementwiseArgs a);           // out = gelu(a)
void gelu_backward(cudaStream_t s, ElementwiseArgs a);  // out = b * gelu'(a)
void pack_heads(cudaStream_t s, PackArgs a);            // token-major -> head-major
void unpack_heads(cudaStream_t s, PackArgs a);          // head-major -> token-major
void causal_softmax(cudaStream_t s, SoftmaxArgs a);
void softmax_backward(cudaStream_t s, SoftmaxBackwardArgs a);
void mean_pool(cudaStream_t s, MeanPoolArgs a);
void mean_pool_backward(cudaStream_t s, MeanPoolBackwardArgs a);
void cross_entropy(cudaStream_t s, CrossEntropyArgs a);
void sum(cudaStream_t s, SumArgs a);
void sgd(cudaStream_t s, SgdArgs a);

}  // namespace tt
