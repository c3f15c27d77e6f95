/* Kernels of cnn_static_train: extern "C" entry points and launchers, one thread per element. */
#include "cnn_static_kernels.h"

#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK 256

static int blocks_for(int n) {
    return (n + BLOCK - 1) / BLOCK;
}

static void check_launch(const char* name) {
    cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess) {
        fprintf(stderr, "cnn_static_train: CUDA error %s launching %s\n", cudaGetErrorString(status), name);
        exit(1);
    }
}

extern "C" __global__ void fill_kernel(int n, float alpha, float* x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = alpha;
}

extern "C" __global__ void scal_kernel(int n, float alpha, float* x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= alpha;
}

extern "C" __global__ void axpy_kernel(int n, float alpha, float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += alpha * x[i];
}

extern "C" __global__ void mul_kernel(int n, float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= x[i];
}

/* One thread per column entry: row (channel, ky, kx), column (oy, ox). */
extern "C" __global__ void im2col_kernel(int n, float* image, int c, int h, int w, int size, int stride, int pad,
                                         int out_h, int out_w, float* columns) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int ox = i % out_w;
    int oy = (i / out_w) % out_h;
    int row = i / (out_w * out_h);
    int kx = row % size;
    int ky = (row / size) % size;
    int channel = row / (size * size);
    int y = oy * stride + ky - pad;
    int x = ox * stride + kx - pad;
    columns[i] = (y >= 0 && y < h && x >= 0 && x < w) ? image[(channel * h + y) * w + x] : 0.0f;
}

/* One thread per image pixel: sums every column entry that read it (no atomics needed). */
extern "C" __global__ void col2im_kernel(int n, float* columns, int c, int h, int w, int size, int stride, int pad,
                                         int out_h, int out_w, float* image) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = i % w;
    int y = (i / w) % h;
    int channel = i / (w * h);
    float sum = 0.0f;
    for (int ky = 0; ky < size; ++ky) {
        for (int kx = 0; kx < size; ++kx) {
            int ty = y + pad - ky, tx = x + pad - kx;
            if (ty < 0 || tx < 0 || ty % stride || tx % stride) continue;
            int oy = ty / stride, ox = tx / stride;
            if (oy >= out_h || ox >= out_w) continue;
            int row = (channel * size + ky) * size + kx;
            sum += columns[(row * out_h + oy) * out_w + ox];
        }
    }
    image[i] += sum;
}

extern "C" __global__ void add_bias_kernel(float* output, float* biases, int total, int n, int spatial) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) output[i] += biases[(i / spatial) % n];
}

/* One thread per filter: sums its delta over the batch and the image. */
extern "C" __global__ void backward_bias_kernel(float* bias_updates, float* delta, int batch, int n, int spatial) {
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= n) return;
    float sum = 0.0f;
    for (int b = 0; b < batch; ++b)
        for (int s = 0; s < spatial; ++s) sum += delta[(b * n + f) * spatial + s];
    bias_updates[f] += sum;
}

extern "C" __global__ void activate_relu_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f) x[i] = 0.0f;
}

extern "C" __global__ void gradient_relu_kernel(float* output, int n, float* delta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && output[i] <= 0.0f) delta[i] = 0.0f;
}

extern "C" __global__ void softmax_cross_entropy_kernel(float* input, float* truth, int batch, int classes,
                                                        float* output, float* delta, float* loss) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch) return;
    float* in = input + b * classes;
    float largest = in[0];
    for (int j = 1; j < classes; ++j) largest = fmaxf(largest, in[j]);
    float sum = 0.0f;
    for (int j = 0; j < classes; ++j) sum += expf(in[j] - largest);
    float total = 0.0f;
    for (int j = 0; j < classes; ++j) {
        int k = b * classes + j;
        float p = expf(in[j] - largest) / sum;
        output[k] = p;
        delta[k] = truth[k] - p;
        if (truth[k] != 0.0f) total -= truth[k] * logf(fmaxf(p, 1e-12f));
    }
    loss[b] = total;
}

extern "C" __global__ void adam_apply_kernel(int n, float* w, float* m, float* v, float b1, float b2, float rate,
                                             float eps, int t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m_hat = m[i] / (1.0f - powf(b1, (float)t));
    float v_hat = v[i] / (1.0f - powf(b2, (float)t));
    w[i] += rate * m_hat / (sqrtf(v_hat) + eps);
}

void fill_gpu(int n, float alpha, float* x) {
    fill_kernel<<<blocks_for(n), BLOCK>>>(n, alpha, x);
    check_launch("fill_kernel");
}

void scal_gpu(int n, float alpha, float* x) {
    scal_kernel<<<blocks_for(n), BLOCK>>>(n, alpha, x);
    check_launch("scal_kernel");
}

void axpy_gpu(int n, float alpha, float* x, float* y) {
    axpy_kernel<<<blocks_for(n), BLOCK>>>(n, alpha, x, y);
    check_launch("axpy_kernel");
}

void mul_gpu(int n, float* x, float* y) {
    mul_kernel<<<blocks_for(n), BLOCK>>>(n, x, y);
    check_launch("mul_kernel");
}

static int out_size(int in, int size, int stride, int pad) {
    return (in + 2 * pad - size) / stride + 1;
}

void im2col_gpu(float* image, int c, int h, int w, int size, int stride, int pad, float* columns) {
    int out_h = out_size(h, size, stride, pad), out_w = out_size(w, size, stride, pad);
    int n = c * size * size * out_h * out_w;
    im2col_kernel<<<blocks_for(n), BLOCK>>>(n, image, c, h, w, size, stride, pad, out_h, out_w, columns);
    check_launch("im2col_kernel");
}

void col2im_gpu(float* columns, int c, int h, int w, int size, int stride, int pad, float* image) {
    int out_h = out_size(h, size, stride, pad), out_w = out_size(w, size, stride, pad);
    int n = c * h * w;
    col2im_kernel<<<blocks_for(n), BLOCK>>>(n, columns, c, h, w, size, stride, pad, out_h, out_w, image);
    check_launch("col2im_kernel");
}

void add_bias_gpu(float* output, float* biases, int batch, int n, int spatial) {
    int total = batch * n * spatial;
    add_bias_kernel<<<blocks_for(total), BLOCK>>>(output, biases, total, n, spatial);
    check_launch("add_bias_kernel");
}

void backward_bias_gpu(float* bias_updates, float* delta, int batch, int n, int spatial) {
    backward_bias_kernel<<<blocks_for(n), BLOCK>>>(bias_updates, delta, batch, n, spatial);
    check_launch("backward_bias_kernel");
}

void activate_relu_gpu(float* x, int n) {
    activate_relu_kernel<<<blocks_for(n), BLOCK>>>(x, n);
    check_launch("activate_relu_kernel");
}

void gradient_relu_gpu(float* output, int n, float* delta) {
    gradient_relu_kernel<<<blocks_for(n), BLOCK>>>(output, n, delta);
    check_launch("gradient_relu_kernel");
}

void softmax_cross_entropy_gpu(float* input, float* truth, int batch, int classes, float* output, float* delta,
                               float* loss) {
    softmax_cross_entropy_kernel<<<blocks_for(batch), BLOCK>>>(input, truth, batch, classes, output, delta, loss);
    check_launch("softmax_cross_entropy_kernel");
}

void adam_apply_gpu(int n, float* w, float* m, float* v, float b1, float b2, float rate, float eps, int t) {
    adam_apply_kernel<<<blocks_for(n), BLOCK>>>(n, w, m, v, b1, b2, rate, eps, t);
    check_launch("adam_apply_kernel");
}
