// The kernels of xla_style_train, named and cut the way XLA's GPU backend emits them: every fusion
// of the jitted train step is its own kernel with its own name (`fusion_3`, `loop_add_fusion`,
// `input_reduce_fusion_2`, ...), a plain symbol without C++ mangling (XLA generates PTX, so nothing
// in a name tells which pointer is read-only). One instance per layer or parameter, as XLA emits one
// kernel per fusion in the module; the tables at the end index them. Included once, by
// xla_style_train.cu.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace xla_style {

constexpr int kMaxLinearLayers = 9;                   // --layers at most 8 hidden layers
constexpr int kMaxParameters = 2 * kMaxLinearLayers;  // a weight and a bias per linear layer

inline int blocks_for(long n) {
    return int((n + 255) / 256);
}

// ---- Bodies (device functions), shared by the numbered instances ----

// out[r, c] = max(dot[r, c] + bias[c], 0): the dot's bias add and ReLU fused into one loop.
__device__ inline void bias_relu(const float* dot, const float* bias, float* out, int rows, int cols) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < long(rows) * cols) out[i] = fmaxf(dot[i] + bias[i % cols], 0.0f);
}
// db[c] = sum over rows of dz[r, c]: a column reduction, one thread per column.
__device__ inline void column_sum(const float* dz, float* db, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sum = 0;
    for (int r = 0; r < rows; ++r) sum += dz[long(r) * cols + c];
    db[c] = sum;
}
// dz[i] = act[i] > 0 ? da[i] : 0 (the select XLA makes of ReLU's derivative).
__device__ inline void relu_select(const float* da, const float* act, float* dz, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) dz[i] = act[i] > 0 ? da[i] : 0.0f;
}
// Adam (optax.adam: b1 0.9, b2 0.999, eps 1e-8) on one parameter. `count` already holds this
// step's number (1 at the first update). With donation the outputs are the inputs.
__device__ inline void adam(const float* p, const float* g, const float* m, const float* v, const int* count,
                            float* p_out, float* m_out, float* v_out, long n, float learning_rate) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    float t = float(*count);
    float m_new = b1 * m[i] + (1 - b1) * g[i];
    float v_new = b2 * v[i] + (1 - b2) * g[i] * g[i];
    float m_hat = m_new / (1 - powf(b1, t)), v_hat = v_new / (1 - powf(b2, t));
    m_out[i] = m_new;
    v_out[i] = v_new;
    p_out[i] = p[i] - learning_rate * m_hat / (sqrtf(v_hat) + eps);
}

// ---- Kernels that occur once in the module ----

// Parameter initialisation (a jitted init function of its own): uniform in [-scale, scale] from a
// hash of the index.
extern "C" __global__ void rng_uniform_fusion(float* out, long n, unsigned seed, float scale) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    unsigned h = unsigned(i) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    out[i] = scale * (float(h & 0xffffff) / float(0x800000) - 1.0f);
}
// jnp.zeros_like: the optimizer state's first value.
extern "C" __global__ void wrapped_broadcast(float* out, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = 0.0f;
}
// logits = dot + bias (the last layer has no ReLU).
extern "C" __global__ void loop_add_fusion(const float* dot, const float* bias, float* out, int rows, int cols) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < long(rows) * cols) out[i] = dot[i] + bias[i % cols];
}
// The optimizer's step count + 1 (optax keeps it on the device, part of the optimizer state).
extern "C" __global__ void loop_add_fusion_1(const int* count, int* count_out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) count_out[0] = count[0] + 1;
}
// lse[r] = log(sum_c exp(logits[r, c])), one thread per row (max-shifted).
extern "C" __global__ void input_reduce_fusion(const float* logits, float* lse, int rows, int classes) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* z = logits + long(r) * classes;
    float top = z[0];
    for (int c = 1; c < classes; ++c) top = fmaxf(top, z[c]);
    float sum = 0;
    for (int c = 0; c < classes; ++c) sum += expf(z[c] - top);
    lse[r] = top + logf(sum);
}
// loss = mean over rows of lse[r] - logits[r, label[r]]: a reduction to a scalar, one thread (the
// batch is small; a thread that waits for no other also runs in the host build).
extern "C" __global__ void input_reduce_fusion_1(const float* logits, const float* lse, const int* labels, float* loss,
                                                 int rows, int classes) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    float sum = 0;
    for (int r = 0; r < rows; ++r) sum += lse[r] - logits[long(r) * classes + labels[r]];
    loss[0] = sum / float(rows);
}
// dlogits = (softmax(logits) - onehot(label)) / rows: the loss's gradient.
extern "C" __global__ void loop_subtract_fusion(const float* logits, const float* lse, const int* labels,
                                                float* dlogits, int rows, int classes) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= long(rows) * classes) return;
    int r = int(i / classes), c = int(i % classes);
    dlogits[i] = (expf(logits[i] - lse[r]) - (c == labels[r] ? 1.0f : 0.0f)) / float(rows);
}

// ---- Numbered instances: one kernel per layer or parameter ----

#define XLA_STYLE_LAYERS(X) X(0, 2) X(1, 3) X(2, 4) X(3, 5) X(4, 6) X(5, 7) X(6, 8) X(7, 9) X(8, 10)
#define XLA_STYLE_PARAMETERS(X) \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17)

#define XLA_STYLE_DEFINE_LAYER(L, R)                                                                             \
    extern "C" __global__ void fusion_##L(const float* dot, const float* bias, float* out, int rows, int cols) { \
        bias_relu(dot, bias, out, rows, cols);                                                                   \
    }                                                                                                            \
    extern "C" __global__ void input_reduce_fusion_##R(const float* dz, float* db, int rows, int cols) {         \
        column_sum(dz, db, rows, cols);                                                                          \
    }                                                                                                            \
    extern "C" __global__ void loop_select_fusion_##L(const float* da, const float* act, float* dz, long n) {    \
        relu_select(da, act, dz, n);                                                                             \
    }
#define XLA_STYLE_DEFINE_PARAMETER(P)                                                                              \
    extern "C" __global__ void fusion_adam_##P(const float* p, const float* g, const float* m, const float* v,     \
                                               const int* count, float* p_out, float* m_out, float* v_out, long n, \
                                               float learning_rate) {                                              \
        adam(p, g, m, v, count, p_out, m_out, v_out, n, learning_rate);                                            \
    }
XLA_STYLE_LAYERS(XLA_STYLE_DEFINE_LAYER)
XLA_STYLE_PARAMETERS(XLA_STYLE_DEFINE_PARAMETER)

using BiasReluKernel = void (*)(const float*, const float*, float*, int, int);
using ColumnSumKernel = void (*)(const float*, float*, int, int);
using SelectKernel = void (*)(const float*, const float*, float*, long);
using AdamKernel = void (*)(const float*, const float*, const float*, const float*, const int*, float*, float*, float*,
                            long, float);

#define XLA_STYLE_BIAS_RELU_ENTRY(L, R) fusion_##L,
#define XLA_STYLE_COLUMN_SUM_ENTRY(L, R) input_reduce_fusion_##R,
#define XLA_STYLE_SELECT_ENTRY(L, R) loop_select_fusion_##L,
#define XLA_STYLE_ADAM_ENTRY(P) fusion_adam_##P,
const BiasReluKernel kBiasRelu[kMaxLinearLayers] = {XLA_STYLE_LAYERS(XLA_STYLE_BIAS_RELU_ENTRY)};
const ColumnSumKernel kColumnSum[kMaxLinearLayers] = {XLA_STYLE_LAYERS(XLA_STYLE_COLUMN_SUM_ENTRY)};
const SelectKernel kSelect[kMaxLinearLayers] = {XLA_STYLE_LAYERS(XLA_STYLE_SELECT_ENTRY)};
const AdamKernel kAdam[kMaxParameters] = {XLA_STYLE_PARAMETERS(XLA_STYLE_ADAM_ENTRY)};

}  // namespace xla_style
