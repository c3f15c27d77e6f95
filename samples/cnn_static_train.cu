/* cnn_static_train: a small image classifier written the way classic C/CUDA frameworks (Caffe,
 * darknet) are: the network plans its memory once at start-up (every layer's output and delta, every
 * parameter and its update buffer, one shared im2col workspace) and reuses it in every step;
 * convolutions are im2col + one cuBLAS GEMM per image (col2im in backward); kernels have C linkage;
 * everything runs on the legacy default stream with synchronous copies; the loss is pulled back to
 * the host in the middle of the step, after the forward pass.
 *
 * Network: 3x32x32 images -> conv 3x3 16 (relu) -> conv 3x3 stride 2 32 (relu) -> connected 10 ->
 * softmax. SGD keeps momentum in the update buffers themselves (w += rate * dw; dw *= momentum), or
 * Adam is assembled from generic scal/axpy/mul kernels plus one final apply kernel.
 *
 * Every --val-every steps a validation pass (forward only, same buffers) and every --ckpt-every steps
 * a checkpoint (every weight copied back to the host) follow the step. NVTX: one range per training
 * step, "iteration N" (or "step N" with --nvtx step). Labels (TBD_SAMPLE_LABELS): one line per
 * buffer, and one span per step, validation pass and checkpoint (samples/common/labels.h). */
#include "cnn_static_kernels.h"
#include "common/check.h"
#include "common/labels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

using tbdsample::Category;

static const char* g_program = "cnn_static_train";
static tbdsample::LabelWriter* g_labels = 0;

static void check_error(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    fprintf(stderr, "%s: CUDA error %s in %s\n", g_program, cudaGetErrorString(status), what);
    exit(1);
}

static void check_blas(cublasStatus_t status, const char* what) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    fprintf(stderr, "%s: cuBLAS error %d in %s\n", g_program, (int)status, what);
    exit(1);
}

/* cuda_make_array: one cudaMalloc per buffer, zero-filled, labelled with what it holds. */
static float* cuda_make_array(size_t n, Category category) {
    float* x = 0;
    check_error(cudaMalloc((void**)&x, n * sizeof(float)), "cudaMalloc");
    if (g_labels) g_labels->record_alloc(x, n * sizeof(float), category);
    check_error(cudaMemset(x, 0, n * sizeof(float)), "cudaMemset");
    return x;
}

static void cuda_free(float* x) {
    if (g_labels) g_labels->record_free(x);
    check_error(cudaFree(x), "cudaFree");
}

/* --plan block: the layers' outputs, deltas, the loss vector and the im2col workspace are planned
 * into one block, as a static memory planner (TensorFlow's, MXNet's) lays out a whole graph: every
 * buffer gets an offset in one cudaMalloc, fixed for the whole run. */
typedef struct plan_entry {
    float** slot;
    size_t n;
    Category category;
} plan_entry;
typedef struct memory_plan {
    int enabled, count;
    plan_entry entries[32];
    char* block;
} memory_plan;
static memory_plan g_plan;

static float* cuda_make_planned(size_t n, Category category) {
    return g_plan.enabled ? 0 : cuda_make_array(n, category); /* planned buffers get their place later */
}

static void plan_reserve(float** slot, size_t n, Category category) {
    if (g_plan.count == 32) {
        fprintf(stderr, "%s: memory plan full\n", g_program);
        exit(1);
    }
    plan_entry e = {slot, n, category};
    g_plan.entries[g_plan.count++] = e;
}

static void plan_commit(void) {
    size_t bytes = 0;
    for (int i = 0; i < g_plan.count; ++i) bytes += (g_plan.entries[i].n * sizeof(float) + 255) / 256 * 256;
    check_error(cudaMalloc((void**)&g_plan.block, bytes), "cudaMalloc");
    if (g_labels) g_labels->record_segment(g_plan.block, bytes);
    size_t offset = 0;
    for (int i = 0; i < g_plan.count; ++i) {
        plan_entry* e = &g_plan.entries[i];
        *e->slot = (float*)(g_plan.block + offset);
        if (g_labels) g_labels->record_alloc(*e->slot, e->n * sizeof(float), e->category);
        offset += (e->n * sizeof(float) + 255) / 256 * 256;
    }
    check_error(cudaMemset(g_plan.block, 0, bytes), "cudaMemset");
}

static void plan_release(void) {
    for (int i = 0; i < g_plan.count; ++i) {
        if (g_labels) g_labels->record_free(*g_plan.entries[i].slot);
        *g_plan.entries[i].slot = 0;
    }
    if (g_labels) g_labels->record_segment_free(g_plan.block);
    check_error(cudaFree(g_plan.block), "cudaFree");
}

static void cuda_push_array(float* x_gpu, const float* x, size_t n) {
    check_error(cudaMemcpy(x_gpu, x, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}

static void cuda_pull_array(const float* x_gpu, float* x, size_t n) {
    check_error(cudaMemcpy(x, x_gpu, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

/* Row-major GEMM, darknet's convention: C(M x N) = alpha * op(A) op(B) + beta * C. */
static void gemm_gpu(cublasHandle_t handle, int ta, int tb, int m, int n, int k, float alpha, float* a, int lda,
                     float* b, int ldb, float beta, float* c, int ldc) {
    check_blas(cublasSgemm(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b,
                           ldb, a, lda, &beta, c, ldc),
               "cublasSgemm");
}

enum layer_type { CONVOLUTIONAL, CONNECTED, SOFTMAX };

typedef struct layer {
    layer_type type;
    int c, h, w; /* input */
    int n, size, stride, pad;
    int out_c, out_h, out_w;
    int inputs, outputs; /* per image */
    int nweights;
    float *weights_gpu, *biases_gpu;
    float *weight_updates_gpu, *bias_updates_gpu;
    float *m_gpu, *v_gpu, *bias_m_gpu, *bias_v_gpu; /* Adam only */
    float *output_gpu, *delta_gpu;
    float* loss_gpu; /* softmax: per-image loss */
} layer;

typedef struct network {
    int n;
    layer layers[4];
    int batch;
    float* input_gpu; /* the batch, copied in every step */
    float* truth_gpu; /* one-hot labels */
    float* workspace; /* im2col columns, shared by every convolution */
    size_t workspace_size;
    cublasHandle_t handle;
    int adam;
    float learning_rate, momentum, decay, b1, b2, eps;
    int t;
} network;

static unsigned long long g_seed = 1;
static float rand_uniform(float lo, float hi) {
    g_seed = g_seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (float)((g_seed >> 40) & 0xffffff) / 16777216.0f;
}

static void make_parameters(network* net, layer* l, int nbiases) {
    int adam = net->adam;
    float* host = (float*)malloc(l->nweights * sizeof(float));
    float scale = sqrtf(2.0f / (float)(l->nweights / nbiases));
    for (int i = 0; i < l->nweights; ++i) host[i] = scale * rand_uniform(-1, 1);
    l->weights_gpu = cuda_make_array(l->nweights, Category::weights);
    cuda_push_array(l->weights_gpu, host, l->nweights);
    free(host);
    l->biases_gpu = cuda_make_array(nbiases, Category::weights);
    l->weight_updates_gpu = cuda_make_array(l->nweights, Category::gradients);
    l->bias_updates_gpu = cuda_make_array(nbiases, Category::gradients);
    if (adam) {
        l->m_gpu = cuda_make_array(l->nweights, Category::optimizer_state);
        l->v_gpu = cuda_make_array(l->nweights, Category::optimizer_state);
        l->bias_m_gpu = cuda_make_array(nbiases, Category::optimizer_state);
        l->bias_v_gpu = cuda_make_array(nbiases, Category::optimizer_state);
    }
}

static layer make_convolutional_layer(network* net, int c, int h, int w, int n, int size, int stride, int pad) {
    layer l;
    memset(&l, 0, sizeof(l));
    l.type = CONVOLUTIONAL;
    l.c = c, l.h = h, l.w = w, l.n = n, l.size = size, l.stride = stride, l.pad = pad;
    l.out_c = n;
    l.out_h = (h + 2 * pad - size) / stride + 1;
    l.out_w = (w + 2 * pad - size) / stride + 1;
    l.inputs = c * h * w;
    l.outputs = l.out_c * l.out_h * l.out_w;
    l.nweights = n * c * size * size;
    make_parameters(net, &l, n);
    l.output_gpu = cuda_make_planned((size_t)l.outputs * net->batch, Category::activations);
    l.delta_gpu = cuda_make_planned((size_t)l.outputs * net->batch, Category::activations);
    size_t columns = (size_t)c * size * size * l.out_h * l.out_w;
    if (columns > net->workspace_size) net->workspace_size = columns;
    return l;
}

static layer make_connected_layer(network* net, int inputs, int outputs) {
    layer l;
    memset(&l, 0, sizeof(l));
    l.type = CONNECTED;
    l.inputs = inputs, l.outputs = outputs;
    l.out_c = outputs, l.out_h = 1, l.out_w = 1, l.n = outputs;
    l.nweights = inputs * outputs;
    make_parameters(net, &l, outputs);
    l.output_gpu = cuda_make_planned((size_t)outputs * net->batch, Category::activations);
    l.delta_gpu = cuda_make_planned((size_t)outputs * net->batch, Category::activations);
    return l;
}

static layer make_softmax_layer(network* net, int inputs) {
    layer l;
    memset(&l, 0, sizeof(l));
    l.type = SOFTMAX;
    l.inputs = l.outputs = inputs;
    l.output_gpu = cuda_make_planned((size_t)inputs * net->batch, Category::activations);
    l.delta_gpu = cuda_make_planned((size_t)inputs * net->batch, Category::activations);
    l.loss_gpu = cuda_make_planned(net->batch, Category::workspace); /* the loss op's own output, read by the host */
    return l;
}

static void forward_convolutional_layer(network* net, layer* l, float* input) {
    int m = l->n, k = l->size * l->size * l->c, n = l->out_h * l->out_w;
    for (int b = 0; b < net->batch; ++b) {
        im2col_gpu(input + (size_t)b * l->inputs, l->c, l->h, l->w, l->size, l->stride, l->pad, net->workspace);
        gemm_gpu(net->handle, 0, 0, m, n, k, 1, l->weights_gpu, k, net->workspace, n, 0,
                 l->output_gpu + (size_t)b * l->outputs, n);
    }
    add_bias_gpu(l->output_gpu, l->biases_gpu, net->batch, l->n, n);
    activate_relu_gpu(l->output_gpu, l->outputs * net->batch);
}

static void backward_convolutional_layer(network* net, layer* l, float* input, float* input_delta) {
    int m = l->n, k = l->size * l->size * l->c, n = l->out_h * l->out_w;
    gradient_relu_gpu(l->output_gpu, l->outputs * net->batch, l->delta_gpu);
    backward_bias_gpu(l->bias_updates_gpu, l->delta_gpu, net->batch, l->n, n);
    for (int b = 0; b < net->batch; ++b) {
        float* delta = l->delta_gpu + (size_t)b * l->outputs;
        im2col_gpu(input + (size_t)b * l->inputs, l->c, l->h, l->w, l->size, l->stride, l->pad, net->workspace);
        gemm_gpu(net->handle, 0, 1, m, k, n, 1, delta, n, net->workspace, n, 1, l->weight_updates_gpu, k);
        if (input_delta) {
            gemm_gpu(net->handle, 1, 0, k, n, m, 1, l->weights_gpu, k, delta, n, 0, net->workspace, n);
            col2im_gpu(net->workspace, l->c, l->h, l->w, l->size, l->stride, l->pad,
                       input_delta + (size_t)b * l->inputs);
        }
    }
}

static void forward_connected_layer(network* net, layer* l, float* input) {
    gemm_gpu(net->handle, 0, 1, net->batch, l->outputs, l->inputs, 1, input, l->inputs, l->weights_gpu, l->inputs, 0,
             l->output_gpu, l->outputs);
    add_bias_gpu(l->output_gpu, l->biases_gpu, net->batch, l->outputs, 1);
}

static void backward_connected_layer(network* net, layer* l, float* input, float* input_delta) {
    backward_bias_gpu(l->bias_updates_gpu, l->delta_gpu, net->batch, l->outputs, 1);
    gemm_gpu(net->handle, 1, 0, l->outputs, l->inputs, net->batch, 1, l->delta_gpu, l->outputs, input, l->inputs, 1,
             l->weight_updates_gpu, l->inputs);
    if (input_delta)
        gemm_gpu(net->handle, 0, 0, net->batch, l->inputs, l->outputs, 1, l->delta_gpu, l->outputs, l->weights_gpu,
                 l->inputs, 1, input_delta, l->inputs);
}

/* Forward through every layer; returns the mean loss, pulled back to the host right away. */
static float forward_network(network* net, float* loss_host) {
    float* input = net->input_gpu;
    for (int i = 0; i < net->n; ++i) {
        layer* l = &net->layers[i];
        fill_gpu(l->outputs * net->batch, 0, l->delta_gpu); /* deltas are accumulated into */
        if (l->type == CONVOLUTIONAL) forward_convolutional_layer(net, l, input);
        if (l->type == CONNECTED) forward_connected_layer(net, l, input);
        if (l->type == SOFTMAX)
            softmax_cross_entropy_gpu(input, net->truth_gpu, net->batch, l->inputs, l->output_gpu, l->delta_gpu,
                                      l->loss_gpu);
        input = l->output_gpu;
    }
    layer* last = &net->layers[net->n - 1];
    cuda_pull_array(last->loss_gpu, loss_host, net->batch);
    float sum = 0;
    for (int b = 0; b < net->batch; ++b) sum += loss_host[b];
    return sum / (float)net->batch;
}

static void backward_network(network* net) {
    for (int i = net->n - 1; i >= 0; --i) {
        layer* l = &net->layers[i];
        float* input = i == 0 ? net->input_gpu : net->layers[i - 1].output_gpu;
        float* input_delta = i == 0 ? 0 : net->layers[i - 1].delta_gpu;
        if (l->type == SOFTMAX) {
            /* the softmax's delta is already the logits' (negative) gradient: hand it down */
            axpy_gpu(l->inputs * net->batch, 1, l->delta_gpu, input_delta);
        }
        if (l->type == CONVOLUTIONAL) backward_convolutional_layer(net, l, input, input_delta);
        if (l->type == CONNECTED) backward_connected_layer(net, l, input, input_delta);
    }
}

static void update_tensor(network* net, int n, float* w, float* dw, float* m, float* v) {
    float rate = net->learning_rate / (float)net->batch;
    if (net->adam) {
        axpy_gpu(n, -net->decay * net->batch, w, dw);
        scal_gpu(n, net->b1, m);
        axpy_gpu(n, 1 - net->b1, dw, m);
        mul_gpu(n, dw, dw); /* dw := dw^2, in place */
        scal_gpu(n, net->b2, v);
        axpy_gpu(n, 1 - net->b2, dw, v);
        adam_apply_gpu(n, w, m, v, net->b1, net->b2, net->learning_rate, net->eps, net->t);
        fill_gpu(n, 0, dw);
    } else {
        axpy_gpu(n, -net->decay * net->batch, w, dw);
        axpy_gpu(n, rate, dw, w);
        scal_gpu(n, net->momentum, dw); /* the update buffer keeps the momentum */
    }
}

static void update_network(network* net) {
    ++net->t;
    for (int i = 0; i < net->n; ++i) {
        layer* l = &net->layers[i];
        if (l->type == SOFTMAX) continue;
        update_tensor(net, l->nweights, l->weights_gpu, l->weight_updates_gpu, l->m_gpu, l->v_gpu);
        update_tensor(net, l->n, l->biases_gpu, l->bias_updates_gpu, l->bias_m_gpu, l->bias_v_gpu);
    }
}

/* A learnable synthetic task: the class is the argmax of a fixed random linear map of the image. */
typedef struct data {
    int batch, inputs, classes;
    float* teacher;
    float *x, *y;
} data;

static void next_batch(data* d) {
    for (int i = 0; i < d->batch * d->inputs; ++i) d->x[i] = rand_uniform(-1, 1);
    memset(d->y, 0, d->batch * d->classes * sizeof(float));
    for (int b = 0; b < d->batch; ++b) {
        int best = 0;
        float best_score = -1e30f;
        for (int j = 0; j < d->classes; ++j) {
            float s = 0;
            for (int i = 0; i < d->inputs; ++i) s += d->teacher[j * d->inputs + i] * d->x[b * d->inputs + i];
            if (s > best_score) best_score = s, best = j;
        }
        d->y[b * d->classes + best] = 1;
    }
}

static void save_weights(network* net, float* host) {
    for (int i = 0; i < net->n; ++i) {
        layer* l = &net->layers[i];
        if (l->type == SOFTMAX) continue;
        cuda_pull_array(l->weights_gpu, host, l->nweights);
        cuda_pull_array(l->biases_gpu, host, l->n);
    }
}

/* Checks the analytic gradients of one batch against the loss itself, tensor by tensor: moving a
 * tensor by eps along its unit gradient direction must change the summed loss by eps * |gradient|
 * (central differences; a wrong, permuted or mis-scaled gradient gives another slope). The update
 * buffers hold minus the gradient of the summed loss (darknet's sign). Returns the tensors that fail. */
static int gradient_check(network* net, float* loss_host) {
    forward_network(net, loss_host);
    backward_network(net);
    const double eps = 1e-3;
    int checked = 0, bad = 0;
    double worst = 0;
    for (int i = 0; i < net->n; ++i) {
        layer* l = &net->layers[i];
        if (l->type == SOFTMAX) continue;
        float* values[2] = {l->weights_gpu, l->biases_gpu};
        float* updates[2] = {l->weight_updates_gpu, l->bias_updates_gpu};
        int sizes[2] = {l->nweights, l->n};
        for (int t = 0; t < 2; ++t) {
            int n = sizes[t];
            float* w = (float*)malloc(n * sizeof(float));
            float* g = (float*)malloc(n * sizeof(float));
            float* moved = (float*)malloc(n * sizeof(float));
            cuda_pull_array(values[t], w, n);
            cuda_pull_array(updates[t], g, n);
            double norm = 0;
            for (int j = 0; j < n; ++j) norm += (double)g[j] * g[j];
            norm = sqrt(norm);
            double side[2];
            for (int s = 0; s < 2; ++s) {
                double step = (s == 0 ? eps : -eps) / (norm > 0 ? norm : 1);
                for (int j = 0; j < n; ++j) moved[j] = (float)(w[j] - step * g[j]); /* -g: the gradient */
                cuda_push_array(values[t], moved, n);
                side[s] = (double)forward_network(net, loss_host) * net->batch;
            }
            cuda_push_array(values[t], w, n);
            double numeric = (side[0] - side[1]) / (2 * eps);
            double error = fabs(numeric - norm) / (norm + 1e-3);
            if (error > worst) worst = error;
            if (error > 0.02) {
                fprintf(stderr, "%s: gradient check: layer %d %s: |gradient| %g, slope of the loss %g\n", g_program, i,
                        t ? "biases" : "weights", norm, numeric);
                ++bad;
            }
            ++checked;
            free(w), free(g), free(moved);
        }
    }
    printf("%s: gradient_check tensors=%d failed=%d worst_relative_error=%.5f\n", g_program, checked, bad, worst);
    return bad;
}

static int parse_int(const char* name, const char* text, int lo) {
    char* end = 0;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < lo || value > 1000000) {
        fprintf(stderr, "%s: error: %s needs an integer >= %d, got '%s'\n", g_program, name, lo, text);
        exit(2);
    }
    return (int)value;
}

static void usage(FILE* out) {
    fprintf(out,
            "usage: %s [--iterations N] [--batch N] [--optimizer sgd|adam] [--val-every N] [--ckpt-every N]\n"
            "          [--nvtx iteration|step|none] [--seed N] [--overfit]\n"
            "          [--gradient-check] [--plan buffers|block]\n"
            "  a statically planned CNN (im2col + one GEMM per image); 0 for --val-every/--ckpt-every: never\n",
            g_program);
}

int main(int argc, char** argv) {
    int iterations = 8, batch = 16, val_every = 3, ckpt_every = 4, adam = 0, seed = 1, overfit = 0, gradcheck = 0;
    const char* nvtx = "iteration";
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (!strcmp(arg, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(arg, "--gradient-check")) { /* one batch: analytic against numeric gradients, then exit */
            gradcheck = 1;
            continue;
        }
        if (!strcmp(arg, "--overfit")) { /* train on one batch again and again: a correctness check */
            overfit = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: error: unknown option or missing value: %s\n", g_program, arg);
            return 2;
        }
        const char* value = argv[++i];
        if (!strcmp(arg, "--plan") && (!strcmp(value, "block") || !strcmp(value, "buffers"))) {
            g_plan.enabled = !strcmp(value, "block");
            continue;
        }
        if (!strcmp(arg, "--iterations"))
            iterations = parse_int(arg, value, 1);
        else if (!strcmp(arg, "--batch"))
            batch = parse_int(arg, value, 1);
        else if (!strcmp(arg, "--val-every"))
            val_every = parse_int(arg, value, 0);
        else if (!strcmp(arg, "--ckpt-every"))
            ckpt_every = parse_int(arg, value, 0);
        else if (!strcmp(arg, "--seed"))
            seed = parse_int(arg, value, 0);
        else if (!strcmp(arg, "--optimizer") && (!strcmp(value, "sgd") || !strcmp(value, "adam")))
            adam = !strcmp(value, "adam");
        else if (!strcmp(arg, "--nvtx") &&
                 (!strcmp(value, "iteration") || !strcmp(value, "step") || !strcmp(value, "none")))
            nvtx = value;
        else {
            fprintf(stderr, "%s: error: unknown option or bad value: %s %s\n", g_program, arg, value);
            return 2;
        }
    }
    g_seed = 0x9e3779b97f4a7c15ULL * (unsigned long long)(seed + 1);
    tbdsample::set_program_name(g_program);
    tbdsample::LabelWriter labels;
    if (g_plan.enabled) labels.enable_timestamps(); /* tensors inside the block need times (labels.h) */
    g_labels = &labels;

    network net;
    memset(&net, 0, sizeof(net));
    net.batch = batch;
    net.adam = adam;
    net.learning_rate = adam ? 0.001f : 0.01f;
    net.momentum = 0.9f;
    net.decay = 0.0005f;
    net.b1 = 0.9f, net.b2 = 0.999f, net.eps = 1e-7f;
    check_blas(cublasCreate(&net.handle), "cublasCreate");

    /* The plan: everything the training loop touches is allocated here, once. */
    const int C = 3, H = 32, W = 32, CLASSES = 10;
    net.input_gpu = cuda_make_array((size_t)batch * C * H * W, Category::input);
    net.truth_gpu = cuda_make_array((size_t)batch * CLASSES, Category::input);
    net.layers[0] = make_convolutional_layer(&net, C, H, W, 16, 3, 1, 1);
    net.layers[1] =
        make_convolutional_layer(&net, net.layers[0].out_c, net.layers[0].out_h, net.layers[0].out_w, 32, 3, 2, 1);
    net.layers[2] = make_connected_layer(&net, net.layers[1].outputs, CLASSES);
    net.layers[3] = make_softmax_layer(&net, CLASSES);
    net.n = 4;
    net.workspace = cuda_make_planned(net.workspace_size, Category::workspace);
    if (g_plan.enabled) {
        for (int i = 0; i < net.n; ++i) {
            layer* l = &net.layers[i];
            plan_reserve(&l->output_gpu, (size_t)l->outputs * batch, Category::activations);
            plan_reserve(&l->delta_gpu, (size_t)l->outputs * batch, Category::activations);
            if (l->type == SOFTMAX) plan_reserve(&l->loss_gpu, batch, Category::workspace);
        }
        plan_reserve(&net.workspace, net.workspace_size, Category::workspace);
        plan_commit();
    }

    data train;
    train.batch = batch, train.inputs = C * H * W, train.classes = CLASSES;
    train.teacher = (float*)malloc((size_t)CLASSES * train.inputs * sizeof(float));
    for (int i = 0; i < CLASSES * train.inputs; ++i) train.teacher[i] = rand_uniform(-1, 1);
    train.x = (float*)malloc((size_t)batch * train.inputs * sizeof(float));
    train.y = (float*)malloc((size_t)batch * CLASSES * sizeof(float));
    float* loss_host = (float*)malloc(batch * sizeof(float));
    float* checkpoint = (float*)malloc((size_t)net.layers[2].nweights * sizeof(float));
    check_error(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    int exit_status = 0;
    if (gradcheck) {
        next_batch(&train);
        cuda_push_array(net.input_gpu, train.x, (size_t)batch * train.inputs);
        cuda_push_array(net.truth_gpu, train.y, (size_t)batch * CLASSES);
        iterations = 0; /* no training: only the check, then the usual clean-up */
        if (gradient_check(&net, loss_host)) exit_status = 1;
    }
    unsigned long long batch_seed = g_seed; /* --overfit: every step gets the first batch */
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    float loss = 0, first_loss = 0;
    int validations = 0, checkpoints = 0;
    for (int step = 0; step < iterations; ++step) {
        long long begin = tbdsample::monotonic_ns();
        char name[64];
        snprintf(name, sizeof(name), "%s %d", nvtx, step);
        if (strcmp(nvtx, "none")) nvtxRangePushA(name);
        if (overfit) g_seed = batch_seed;
        next_batch(&train);
        cuda_push_array(net.input_gpu, train.x, (size_t)batch * train.inputs);
        cuda_push_array(net.truth_gpu, train.y, (size_t)batch * CLASSES);
        loss = forward_network(&net, loss_host);
        if (step == 0) first_loss = loss;
        backward_network(&net);
        update_network(&net);
        check_error(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        if (strcmp(nvtx, "none")) nvtxRangePop();
        labels.record_span("training", step, begin, tbdsample::monotonic_ns());

        if (val_every && (step + 1) % val_every == 0) {
            begin = tbdsample::monotonic_ns();
            next_batch(&train);
            cuda_push_array(net.input_gpu, train.x, (size_t)batch * train.inputs);
            cuda_push_array(net.truth_gpu, train.y, (size_t)batch * CLASSES);
            float validation_loss = forward_network(&net, loss_host);
            printf("%s: step %d validation loss %.4f\n", g_program, step, (double)validation_loss);
            labels.record_span("validation", validations++, begin, tbdsample::monotonic_ns());
        }
        if (ckpt_every && (step + 1) % ckpt_every == 0) {
            begin = tbdsample::monotonic_ns();
            save_weights(&net, checkpoint);
            labels.record_span("checkpoint", checkpoints++, begin, tbdsample::monotonic_ns());
        }
    }
    struct timespec finished;
    clock_gettime(CLOCK_MONOTONIC, &finished);
    double elapsed_ms = (finished.tv_sec - started.tv_sec) * 1e3 + (finished.tv_nsec - started.tv_nsec) / 1e6;

    if (g_plan.enabled) plan_release(); /* the block's buffers first: their pointers become null */
    for (int i = 0; i < net.n; ++i) {
        layer* l = &net.layers[i];
        float* buffers[] = {l->weights_gpu, l->biases_gpu, l->weight_updates_gpu, l->bias_updates_gpu, l->m_gpu,
                            l->v_gpu,       l->bias_m_gpu, l->bias_v_gpu,         l->output_gpu,       l->delta_gpu,
                            l->loss_gpu};
        for (float* buffer : buffers)
            if (buffer) cuda_free(buffer);
    }
    if (net.workspace) cuda_free(net.workspace);
    cuda_free(net.input_gpu);
    cuda_free(net.truth_gpu);
    check_blas(cublasDestroy(net.handle), "cublasDestroy");
    free(train.teacher), free(train.x), free(train.y), free(loss_host), free(checkpoint);
    printf("%s: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f\n", g_program, iterations, (double)loss,
           elapsed_ms, (double)first_loss);
    return exit_status;
}
