// Kernels of gpt_arena_train, templated on the storage type of parameters and activations (float or
// __nv_bfloat16); all arithmetic is in float. Plain one-thread-per-item kernels: the sample is about
// the memory shape of an arena trainer, not about speed.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>

namespace gpt {

__device__ inline float load(float x) {
    return x;
}
__device__ inline float load(__nv_bfloat16 x) {
    return __bfloat162float(x);
}
template <typename T>
__device__ inline T store(float x);
template <>
__device__ inline float store<float>(float x) {
    return x;
}
template <>
__device__ inline __nv_bfloat16 store<__nv_bfloat16>(float x) {
    return __float2bfloat16(x);
}

inline int grid_for(long n, int block) {
    return static_cast<int>((n + block - 1) / block);
}

// out[b,t,:] = wte[token] + wpe[t]
template <typename T>
__global__ void encoder_forward(T* out, const int* tokens, const T* wte, const T* wpe, int BT, int T_, int C) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= long(BT) * C) return;
    int c = int(i % C), bt = int(i / C), t = bt % T_;
    out[i] = store<T>(load(wte[long(tokens[bt]) * C + c]) + load(wpe[long(t) * C + c]));
}

// One thread per (v, c) of wte and (t, c) of wpe: sums over the tokens, no atomics.
template <typename T>
__global__ void encoder_backward(T* dwte, T* dwpe, const T* dout, const int* tokens, int BT, int T_, int C, int V) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < long(V) * C) {
        int v = int(i / C), c = int(i % C);
        float sum = 0;
        for (int bt = 0; bt < BT; ++bt)
            if (tokens[bt] == v) sum += load(dout[long(bt) * C + c]);
        dwte[i] = store<T>(load(dwte[i]) + sum);
    }
    if (i < long(T_) * C) {
        int t = int(i / C), c = int(i % C);
        float sum = 0;
        for (int bt = t; bt < BT; bt += T_) sum += load(dout[long(bt) * C + c]);
        dwpe[i] = store<T>(load(dwpe[i]) + sum);
    }
}

// One thread per row: normalise, keep the mean and 1/std for backward.
template <typename T>
__global__ void layernorm_forward(T* out, float* mean, float* rstd, const T* inp, const T* weight, const T* bias, int N,
                                  int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const T* x = inp + long(row) * C;
    float m = 0;
    for (int c = 0; c < C; ++c) m += load(x[c]);
    m /= C;
    float var = 0;
    for (int c = 0; c < C; ++c) var += (load(x[c]) - m) * (load(x[c]) - m);
    float s = rsqrtf(var / C + 1e-5f);
    for (int c = 0; c < C; ++c)
        out[long(row) * C + c] = store<T>((load(x[c]) - m) * s * load(weight[c]) + load(bias[c]));
    mean[row] = m;
    rstd[row] = s;
}

// dinp += the input gradient, one thread per row.
template <typename T>
__global__ void layernorm_backward_input(T* dinp, const T* dout, const T* inp, const T* weight, const float* mean,
                                         const float* rstd, int N, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const T* x = inp + long(row) * C;
    const T* dy = dout + long(row) * C;
    float dnorm_mean = 0, dnorm_norm_mean = 0;
    for (int c = 0; c < C; ++c) {
        float norm = (load(x[c]) - mean[row]) * rstd[row];
        float dnorm = load(weight[c]) * load(dy[c]);
        dnorm_mean += dnorm;
        dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int c = 0; c < C; ++c) {
        float norm = (load(x[c]) - mean[row]) * rstd[row];
        float dnorm = load(weight[c]) * load(dy[c]);
        long k = long(row) * C + c;
        dinp[k] = store<T>(load(dinp[k]) + (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rstd[row]);
    }
}

// dweight, dbias += their gradients, one thread per channel.
template <typename T>
__global__ void layernorm_backward_params(T* dweight, T* dbias, const T* dout, const T* inp, const float* mean,
                                          const float* rstd, int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float dw = 0, db = 0;
    for (int row = 0; row < N; ++row) {
        float dy = load(dout[long(row) * C + c]);
        dw += dy * (load(inp[long(row) * C + c]) - mean[row]) * rstd[row];
        db += dy;
    }
    dweight[c] = store<T>(load(dweight[c]) + dw);
    dbias[c] = store<T>(load(dbias[c]) + db);
}

template <typename T>
__global__ void add_bias(T* out, const T* bias, int N, int OC) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < long(N) * OC) out[i] = store<T>(load(out[i]) + load(bias[i % OC]));
}

// dbias += column sums of dout, one thread per output channel.
template <typename T>
__global__ void bias_backward(T* dbias, const T* dout, int N, int OC) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= OC) return;
    float sum = 0;
    for (int row = 0; row < N; ++row) sum += load(dout[long(row) * OC + o]);
    dbias[o] = store<T>(load(dbias[o]) + sum);
}

template <typename T>
__global__ void residual_forward(T* out, const T* a, const T* b, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = store<T>(load(a[i]) + load(b[i]));
}

__device__ inline float gelu(float x) {
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

template <typename T>
__global__ void gelu_forward(T* out, const T* inp, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = store<T>(gelu(load(inp[i])));
}

// dinout: gradient of the GELU's output in, of its input out.
template <typename T>
__global__ void gelu_backward(T* dinout, const T* inp, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    float x = load(inp[i]);
    float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    float th = tanhf(u);
    float du = 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
    float grad = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
    dinout[i] = store<T>(load(dinout[i]) * grad);
}

// Causal self-attention, one thread per (b, t, h): qkv is [B, T, 3C] (q | k | v), att [B, NH, T, T].
template <typename T>
__global__ void attention_forward(T* out, T* att, const T* qkv, int B, int T_, int C, int NH) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * T_ * NH) return;
    int h = i % NH, t = (i / NH) % T_, b = i / (NH * T_);
    int hs = C / NH;
    float scale = rsqrtf(float(hs));
    const T* q = qkv + (long(b) * T_ + t) * 3 * C + h * hs;
    T* row = att + ((long(b) * NH + h) * T_ + t) * T_;
    float largest = -1e30f;
    for (int t2 = 0; t2 <= t; ++t2) {
        const T* k = qkv + (long(b) * T_ + t2) * 3 * C + C + h * hs;
        float s = 0;
        for (int j = 0; j < hs; ++j) s += load(q[j]) * load(k[j]);
        s *= scale;
        largest = fmaxf(largest, s);
        row[t2] = store<T>(s);
    }
    float sum = 0;
    for (int t2 = 0; t2 <= t; ++t2) {
        float e = expf(load(row[t2]) - largest);
        sum += e;
        row[t2] = store<T>(e);
    }
    for (int t2 = 0; t2 < T_; ++t2) row[t2] = store<T>(t2 <= t ? load(row[t2]) / sum : 0.0f);
    T* y = out + (long(b) * T_ + t) * C + h * hs;
    for (int j = 0; j < hs; ++j) {
        float acc = 0;
        for (int t2 = 0; t2 <= t; ++t2)
            acc += load(row[t2]) * load(qkv[(long(b) * T_ + t2) * 3 * C + 2 * C + h * hs + j]);
        y[j] = store<T>(acc);
    }
}

// Attention backward, part 1 of 3 (per (b, t, h)): rowdot = sum_t2 att * (dy_t . v_t2), the softmax
// backward's row sum, kept in the operation's scratch for parts 2 and 3.
template <typename T>
__global__ void attention_backward_rowdot(float* rowdot, const T* dout, const T* att, const T* qkv, int B, int T_,
                                          int C, int NH) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * T_ * NH) return;
    int h = i % NH, t = (i / NH) % T_, b = i / (NH * T_);
    int hs = C / NH;
    const T* dy = dout + (long(b) * T_ + t) * C + h * hs;
    const T* row = att + ((long(b) * NH + h) * T_ + t) * T_;
    float sum = 0;
    for (int t2 = 0; t2 <= t; ++t2) {
        const T* v = qkv + (long(b) * T_ + t2) * 3 * C + 2 * C + h * hs;
        float d = 0;
        for (int j = 0; j < hs; ++j) d += load(dy[j]) * load(v[j]);
        sum += load(row[t2]) * d;
    }
    rowdot[(long(b) * NH + h) * T_ + t] = sum;
}

// Part 2 (per (b, t, h)): dq_t = scale * sum_t2 att (dy_t . v_t2 - rowdot_t) k_t2.
template <typename T>
__global__ void attention_backward_query(T* dqkv, const float* rowdot, const T* dout, const T* att, const T* qkv, int B,
                                         int T_, int C, int NH) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * T_ * NH) return;
    int h = i % NH, t = (i / NH) % T_, b = i / (NH * T_);
    int hs = C / NH;
    float scale = rsqrtf(float(hs));
    const T* dy = dout + (long(b) * T_ + t) * C + h * hs;
    const T* row = att + ((long(b) * NH + h) * T_ + t) * T_;
    float r = rowdot[(long(b) * NH + h) * T_ + t];
    T* dq = dqkv + (long(b) * T_ + t) * 3 * C + h * hs;
    for (int j = 0; j < hs; ++j) dq[j] = store<T>(0.0f);
    for (int t2 = 0; t2 <= t; ++t2) {
        const T* k = qkv + (long(b) * T_ + t2) * 3 * C + C + h * hs;
        const T* v = k + C;
        float d = 0;
        for (int j = 0; j < hs; ++j) d += load(dy[j]) * load(v[j]);
        float ds = load(row[t2]) * (d - r) * scale;
        for (int j = 0; j < hs; ++j) dq[j] = store<T>(load(dq[j]) + ds * load(k[j]));
    }
}

// Part 3 (per (b, t2, h)): dk_t2 and dv_t2, summed over the later queries t >= t2.
template <typename T>
__global__ void attention_backward_key_value(T* dqkv, const float* rowdot, const T* dout, const T* att, const T* qkv,
                                             int B, int T_, int C, int NH) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * T_ * NH) return;
    int h = i % NH, t2 = (i / NH) % T_, b = i / (NH * T_);
    int hs = C / NH;
    float scale = rsqrtf(float(hs));
    const T* v = qkv + (long(b) * T_ + t2) * 3 * C + 2 * C + h * hs;
    T* dk = dqkv + (long(b) * T_ + t2) * 3 * C + C + h * hs;
    T* dv = dk + C;
    for (int j = 0; j < hs; ++j) dk[j] = dv[j] = store<T>(0.0f);
    for (int t = t2; t < T_; ++t) {
        const T* q = qkv + (long(b) * T_ + t) * 3 * C + h * hs;
        const T* dy = dout + (long(b) * T_ + t) * C + h * hs;
        float a = load(att[((long(b) * NH + h) * T_ + t) * T_ + t2]);
        float d = 0;
        for (int j = 0; j < hs; ++j) d += load(dy[j]) * load(v[j]);
        float ds = a * (d - rowdot[(long(b) * NH + h) * T_ + t]) * scale;
        for (int j = 0; j < hs; ++j) {
            dk[j] = store<T>(load(dk[j]) + ds * load(q[j]));
            dv[j] = store<T>(load(dv[j]) + a * load(dy[j]));
        }
    }
}

// Softmax cross-entropy over the vocabulary, one thread per token: losses[bt] and, when `backward`,
// the logits' gradient in place of the logits (scaled by 1/(B*T), the mean loss's).
template <typename T>
__global__ void fused_classifier(T* logits, float* losses, const int* targets, int BT, int V, bool backward) {
    int bt = blockIdx.x * blockDim.x + threadIdx.x;
    if (bt >= BT) return;
    T* row = logits + long(bt) * V;
    float largest = -1e30f;
    for (int v = 0; v < V; ++v) largest = fmaxf(largest, load(row[v]));
    float sum = 0;
    for (int v = 0; v < V; ++v) sum += expf(load(row[v]) - largest);
    int target = targets[bt];
    losses[bt] = -(load(row[target]) - largest - logf(sum));
    if (!backward) return;
    for (int v = 0; v < V; ++v) {
        float p = expf(load(row[v]) - largest) / sum;
        row[v] = store<T>((p - (v == target ? 1.0f : 0.0f)) / float(BT));
    }
}

// Sum of squares of the whole gradient arena, added into *out (zeroed before): each thread sums a
// grid-strided share and adds it atomically.
template <typename T> __global__ void squared_norm(float* out, const T* grads, long n) {
    float sum = 0;
    for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x)
        sum += load(grads[i]) * load(grads[i]);
    atomicAdd(out, sum);
}

// AdamW over whole arenas. With a master copy (low-precision parameters) the update is made on the
// FP32 master and the parameters are rounded from it; without, params are the FP32 values.
template <typename T>
__global__ void adamw_update(T* params, float* master, const T* grads, float* m, float* v, long n, float lr,
                             float beta1, float beta2, float beta1_correction, float beta2_correction, float eps,
                             float weight_decay, float grad_scale) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    float g = load(grads[i]) * grad_scale;
    float mi = beta1 * m[i] + (1 - beta1) * g;
    float vi = beta2 * v[i] + (1 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float w = master ? master[i] : load(params[i]);
    w -= lr * ((mi / beta1_correction) / (sqrtf(vi / beta2_correction) + eps) + weight_decay * w);
    if (master) master[i] = w;
    params[i] = store<T>(w);
}

// Master weights from the parameters once at start-up, and parameters from FP32 initial values.
template <typename T>
__global__ void copy_to_float(float* out, const T* in, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = load(in[i]);
}
template <typename T>
__global__ void copy_from_float(T* out, const float* in, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = store<T>(in[i]);
}

}  // namespace gpt
