/* Kernels of cnn_static_train, C linkage (as a C framework such as darknet declares them): the
 * trace sees unmangled names, so no parameter carries const-ness. All launches go to the legacy
 * default stream, like the rest of that program. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* Generic BLAS-like element-wise operations (x and y of n floats). */
void fill_gpu(int n, float alpha, float* x);
void scal_gpu(int n, float alpha, float* x);
void axpy_gpu(int n, float alpha, float* x, float* y); /* y += alpha * x */
void mul_gpu(int n, float* x, float* y);               /* y *= x */

/* Convolution helpers, one image of c x h x w floats. */
void im2col_gpu(float* image, int c, int h, int w, int size, int stride, int pad, float* columns);
void col2im_gpu(float* columns, int c, int h, int w, int size, int stride, int pad, float* image);

void add_bias_gpu(float* output, float* biases, int batch, int n, int spatial);
void backward_bias_gpu(float* bias_updates, float* delta, int batch, int n, int spatial);
void activate_relu_gpu(float* x, int n);
void gradient_relu_gpu(float* output, int n, float* delta); /* delta *= (output > 0) */

/* Softmax over `classes` per row and cross-entropy against one-hot truth: delta = truth - p (the
 * negative gradient, darknet's convention), loss[b] = -sum truth * log p. */
void softmax_cross_entropy_gpu(float* input, float* truth, int batch, int classes, float* output, float* delta,
                               float* loss);

/* w += rate * m_hat / (sqrt(v_hat) + eps), the last step of Adam (m, v bias-corrected with t). */
void adam_apply_gpu(int n, float* w, float* m, float* v, float b1, float b2, float rate, float eps, int t);

#ifdef __cplusplus
}
#endif
