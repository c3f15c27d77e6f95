// Kernels of transformer_temps_train: each takes its argument struct by value.
#include "transformer_ops.h"

#include "common/check.h"

#include <cmath>

namespace tt {
namespace {

constexpr int kBlock = 256;
int blocks(long n) {
    return static_cast<int>((n + kBlock - 1) / kBlock);
}
__device__ long global_index() {
    return blockIdx.x * long(blockDim.x) + threadIdx.x;
}

__device__ float hash_uniform(unsigned seed, long i) {  // in [-1, 1)
    unsigned h = seed ^ static_cast<unsigned>(i * 2654435761u);
    h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15, h *= 0x846ca68bu, h ^= h >> 16;
    return static_cast<float>(h & 0xffffff) / 8388608.0f - 1.0f;
}

__global__ void fill_kernel(FillArgs a) {
    long i = global_index();
    if (i < a.n) a.out[i] = a.offset + (a.scale != 0.0f ? a.scale * hash_uniform(a.seed, i) : 0.0f);
}

__global__ void embedding_kernel(EmbeddingArgs a) {
    long i = global_index();
    if (i >= long(a.rows) * a.channels) return;
    int c = int(i % a.channels), row = int(i / a.channels);
    a.out[i] = a.table[long(a.tokens[row]) * a.channels + c] + a.position[long(row % a.seq) * a.channels + c];
}

// One thread per table entry (and position entry): sums over the rows, no atomics.
__global__ void embedding_backward_kernel(EmbeddingBackwardArgs a) {
    long i = global_index();
    int c = int(i % a.channels);
    if (i < long(a.vocab) * a.channels) {
        int v = int(i / a.channels);
        float s = 0;
        for (int row = 0; row < a.rows; ++row)
            if (a.tokens[row] == v) s += a.dout[long(row) * a.channels + c];
        a.dtable[i] = s;
    }
    if (i < long(a.seq) * a.channels) {
        int t = int(i / a.channels);
        float s = 0;
        for (int row = t; row < a.rows; row += a.seq) s += a.dout[long(row) * a.channels + c];
        a.dposition[i] = s;
    }
}

__global__ void add_bias_kernel(BiasArgs a) {
    long i = global_index();
    if (i < long(a.rows) * a.cols) a.out[i] += a.bias[i % a.cols];
}

// grid (column blocks, row blocks): thread per column of one block of rows.
__global__ void partial_column_sum_kernel(PartialColumnSumArgs a) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, block = blockIdx.y;
    if (col >= a.cols) return;
    float s = 0;
    int end = min(a.rows, (block + 1) * a.rows_per_block);
    for (int row = block * a.rows_per_block; row < end; ++row) s += a.in[long(row) * a.cols + col];
    a.partial[long(block) * a.cols + col] = s;
}

__global__ void reduce_partials_kernel(ReduceArgs a) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= a.cols) return;
    float s = 0;
    for (int b = 0; b < a.blocks; ++b) s += a.partial[long(b) * a.cols + col];
    a.out[col] = s;
}

__global__ void layernorm_kernel(LayerNormArgs a) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= a.rows) return;
    const float* x = a.x + long(row) * a.cols;
    float m = 0, v = 0;
    for (int c = 0; c < a.cols; ++c) m += x[c];
    m /= a.cols;
    for (int c = 0; c < a.cols; ++c) v += (x[c] - m) * (x[c] - m);
    float r = rsqrtf(v / a.cols + 1e-5f);
    for (int c = 0; c < a.cols; ++c) a.y[long(row) * a.cols + c] = (x[c] - m) * r * a.gamma[c] + a.beta[c];
    a.mean[row] = m;
    a.rstd[row] = r;
}

// grid.x = row blocks; each thread handles one column of the block for the partial sums after the
// rows' input gradients (one thread per row of the block) are done.
__global__ void layernorm_backward_kernel(LayerNormBackwardArgs a) {
    int first = blockIdx.x * a.rows_per_block;
    int end = min(a.rows, first + a.rows_per_block);
    for (int row = first + int(threadIdx.x); row < end; row += blockDim.x) {
        const float* x = a.x + long(row) * a.cols;
        const float* dy = a.dy + long(row) * a.cols;
        float mean_d = 0, mean_dn = 0;
        for (int c = 0; c < a.cols; ++c) {
            float n = (x[c] - a.mean[row]) * a.rstd[row], d = dy[c] * a.gamma[c];
            mean_d += d, mean_dn += d * n;
        }
        mean_d /= a.cols, mean_dn /= a.cols;
        for (int c = 0; c < a.cols; ++c) {
            float n = (x[c] - a.mean[row]) * a.rstd[row], d = dy[c] * a.gamma[c];
            a.dx[long(row) * a.cols + c] = (d - mean_d - n * mean_dn) * a.rstd[row];
        }
    }
    for (int c = threadIdx.x; c < a.cols; c += blockDim.x) {
        float dg = 0, db = 0;
        for (int row = first; row < end; ++row) {
            float dy = a.dy[long(row) * a.cols + c];
            dg += dy * (a.x[long(row) * a.cols + c] - a.mean[row]) * a.rstd[row];
            db += dy;
        }
        a.partial_dgamma[long(blockIdx.x) * a.cols + c] = dg;
        a.partial_dbeta[long(blockIdx.x) * a.cols + c] = db;
    }
}

__global__ void add_kernel(ElementwiseArgs a) {
    long i = global_index();
    if (i < a.n) a.out[i] = a.a[i] + a.b[i];
}

__device__ float gelu_of(float x) {
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_kernel(ElementwiseArgs a) {
    long i = global_index();
    if (i < a.n) a.out[i] = gelu_of(a.a[i]);
}

__global__ void gelu_backward_kernel(ElementwiseArgs a) {
    long i = global_index();
    if (i >= a.n) return;
    float x = a.a[i], t = tanhf(0.7978845608f * (x + 0.044715f * x * x * x));
    float du = 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
    a.out[i] = a.b[i] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
}

// Thread per element of the head-major operand [B*H, T, D].
__device__ bool pack_index(const PackArgs& a, long i, long& token_major) {
    int head_dim = a.channels / a.heads;
    if (i >= long(a.batch) * a.heads * a.seq * head_dim) return false;
    int d = int(i % head_dim), t = int((i / head_dim) % a.seq);
    int h = int((i / (long(head_dim) * a.seq)) % a.heads), b = int(i / (long(head_dim) * a.seq * a.heads));
    token_major = (long(b) * a.seq + t) * a.width + a.offset + h * head_dim + d;
    return true;
}

__global__ void pack_heads_kernel(PackArgs a) {
    long i = global_index(), j;
    if (pack_index(a, i, j)) a.out[i] = a.in[j];
}

__global__ void unpack_heads_kernel(PackArgs a) {
    long i = global_index(), j;
    if (pack_index(a, i, j)) a.out[j] = a.in[i];
}

// Row r of a [B*H, T, T] score tensor is query t = r % T: keys beyond t are masked.
__global__ void causal_softmax_kernel(SoftmaxArgs a) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= a.rows) return;
    float* x = a.inout + long(row) * a.cols;
    int t = row % a.cols;
    float largest = -1e30f, total = 0;
    for (int j = 0; j <= t; ++j) largest = fmaxf(largest, x[j] * a.scale);
    for (int j = 0; j <= t; ++j) total += expf(x[j] * a.scale - largest);
    for (int j = 0; j < a.cols; ++j) x[j] = j <= t ? expf(x[j] * a.scale - largest) / total : 0.0f;
}

__global__ void softmax_backward_kernel(SoftmaxBackwardArgs a) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= a.rows) return;
    const float* p = a.probs + long(row) * a.cols;
    float* d = a.inout + long(row) * a.cols;
    float dot = 0;
    for (int j = 0; j < a.cols; ++j) dot += p[j] * d[j];
    for (int j = 0; j < a.cols; ++j) d[j] = p[j] * (d[j] - dot);
}

__global__ void mean_pool_kernel(MeanPoolArgs a) {
    long i = global_index();
    if (i >= long(a.batch) * a.channels) return;
    int c = int(i % a.channels), b = int(i / a.channels);
    float s = 0;
    for (int t = 0; t < a.seq; ++t) s += a.in[(long(b) * a.seq + t) * a.channels + c];
    a.out[i] = s / a.seq;
}

__global__ void mean_pool_backward_kernel(MeanPoolBackwardArgs a) {
    long i = global_index();
    if (i >= long(a.batch) * a.seq * a.channels) return;
    int c = int(i % a.channels), b = int(i / (long(a.seq) * a.channels));
    a.din[i] = a.dout[long(b) * a.channels + c] / a.seq;
}

__global__ void cross_entropy_kernel(CrossEntropyArgs a) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= a.batch) return;
    const float* z = a.logits + long(b) * a.classes;
    float largest = z[0], total = 0;
    for (int k = 1; k < a.classes; ++k) largest = fmaxf(largest, z[k]);
    for (int k = 0; k < a.classes; ++k) total += expf(z[k] - largest);
    a.losses[b] = logf(total) + largest - z[a.labels[b]];
    if (!a.dlogits) return;
    for (int k = 0; k < a.classes; ++k)
        a.dlogits[long(b) * a.classes + k] =
            (expf(z[k] - largest) / total - (k == a.labels[b] ? 1.0f : 0.0f)) / a.batch;
}

__global__ void sum_kernel(SumArgs a) {  // one thread: the vectors are a batch long
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    float s = 0;
    for (int i = 0; i < a.n; ++i) s += a.in[i];
    *a.out = s;
}

__global__ void sgd_kernel(SgdArgs a) {
    long i = global_index();
    if (i >= a.n) return;
    float g = a.grad[i] + a.weight_decay * a.param[i];
    float m = a.first ? g : a.momentum * a.momentum_buffer[i] + g;
    a.momentum_buffer[i] = m;
    a.param[i] -= a.lr * m;
}

}  // namespace

#define TT_LAUNCH(kernel, grid, block, stream, args)    \
    do {                                                \
        kernel<<<(grid), (block), 0, (stream)>>>(args); \
        CUDA_CHECK_LAUNCH();                            \
    } while (0)

void fill(cudaStream_t s, FillArgs a) {
    TT_LAUNCH(fill_kernel, blocks(a.n), kBlock, s, a);
}
void embedding(cudaStream_t s, EmbeddingArgs a) {
    TT_LAUNCH(embedding_kernel, blocks(long(a.rows) * a.channels), kBlock, s, a);
}
void embedding_backward(cudaStream_t s, EmbeddingBackwardArgs a) {
    long n = long(a.vocab > a.seq ? a.vocab : a.seq) * a.channels;
    TT_LAUNCH(embedding_backward_kernel, blocks(n), kBlock, s, a);
}
void add_bias(cudaStream_t s, BiasArgs a) {
    TT_LAUNCH(add_bias_kernel, blocks(long(a.rows) * a.cols), kBlock, s, a);
}
void partial_column_sum(cudaStream_t s, PartialColumnSumArgs a) {
    dim3 grid((a.cols + 63) / 64, (a.rows + a.rows_per_block - 1) / a.rows_per_block);
    TT_LAUNCH(partial_column_sum_kernel, grid, 64, s, a);
}
void reduce_partials(cudaStream_t s, ReduceArgs a) {
    TT_LAUNCH(reduce_partials_kernel, (a.cols + 63) / 64, 64, s, a);
}
void layernorm(cudaStream_t s, LayerNormArgs a) {
    TT_LAUNCH(layernorm_kernel, (a.rows + 63) / 64, 64, s, a);
}
void layernorm_backward(cudaStream_t s, LayerNormBackwardArgs a) {
    TT_LAUNCH(layernorm_backward_kernel, (a.rows + a.rows_per_block - 1) / a.rows_per_block, 64, s, a);
}
void add(cudaStream_t s, ElementwiseArgs a) {
    TT_LAUNCH(add_kernel, blocks(a.n), kBlock, s, a);
}
void gelu(cudaStream_t s, ElementwiseArgs a) {
    TT_LAUNCH(gelu_kernel, blocks(a.n), kBlock, s, a);
}
void gelu_backward(cudaStream_t s, ElementwiseArgs a) {
    TT_LAUNCH(gelu_backward_kernel, blocks(a.n), kBlock, s, a);
}
void pack_heads(cudaStream_t s, PackArgs a) {
    TT_LAUNCH(pack_heads_kernel, blocks(long(a.batch) * a.seq * a.channels), kBlock, s, a);
}
void unpack_heads(cudaStream_t s, PackArgs a) {
    TT_LAUNCH(unpack_heads_kernel, blocks(long(a.batch) * a.seq * a.channels), kBlock, s, a);
}
void causal_softmax(cudaStream_t s, SoftmaxArgs a) {
    TT_LAUNCH(causal_softmax_kernel, (a.rows + 63) / 64, 64, s, a);
}
void softmax_backward(cudaStream_t s, SoftmaxBackwardArgs a) {
    TT_LAUNCH(softmax_backward_kernel, (a.rows + 63) / 64, 64, s, a);
}
void mean_pool(cudaStream_t s, MeanPoolArgs a) {
    TT_LAUNCH(mean_pool_kernel, blocks(long(a.batch) * a.channels), kBlock, s, a);
}
void mean_pool_backward(cudaStream_t s, MeanPoolBackwardArgs a) {
    TT_LAUNCH(mean_pool_backward_kernel, blocks(long(a.batch) * a.seq * a.channels), kBlock, s, a);
}
void cross_entropy(cudaStream_t s, CrossEntropyArgs a) {
    TT_LAUNCH(cross_entropy_kernel, (a.batch + 63) / 64, 64, s, a);
}
void sum(cudaStream_t s, SumArgs a) {
    TT_LAUNCH(sum_kernel, 1, 1, s, a);
}
void sgd(cudaStream_t s, SgdArgs a) {
    TT_LAUNCH(sgd_kernel, blocks(a.n), kBlock, s, a);
}

}  // namespace tt
