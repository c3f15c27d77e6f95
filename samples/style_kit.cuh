// The little that lazy_solver_train, packed_attention_train and grad_accumulate_train share: a
// runtime (stream, cuBLAS handle, label file), labelled device allocations, a row-major GEMM with
// beta, an integer/word option parser, synthetic batches, and a few generic element-wise kernels of
// the kind a framework reuses everywhere (scale, multiply, fill). Each program includes it once
// (one translation unit each), so the kernels here are ordinary __global__ functions.
#pragma once

#include "common/check.h"
#include "common/labels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace style {

using tbdsample::Category;

struct Runtime {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    tbdsample::LabelWriter labels;
    void open() {
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUBLAS_CHECK(cublasCreate(&blas));
        CUBLAS_CHECK(cublasSetStream(blas, stream));
        CUBLAS_CHECK(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
    }
    void close() {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUBLAS_CHECK(cublasDestroy(blas));
        CUDA_CHECK(cudaStreamDestroy(stream));
    }
};

// cudaMalloc of `count` floats with its true category in the label file.
inline float* allocate(Runtime& rt, long count, Category category) {
    float* p = nullptr;
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), size_t(count) * sizeof(float)));
    rt.labels.record_alloc(p, size_t(count) * sizeof(float), category);
    return p;
}
inline void release(Runtime& rt, float*& p) {
    if (!p) return;
    rt.labels.record_free(p);
    CUDA_CHECK(cudaFree(p));
    p = nullptr;
}
// The stream-ordered pair (cudaMallocAsync / cudaFreeAsync).
inline float* allocate_async(Runtime& rt, long count, Category category) {
    float* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&p), size_t(count) * sizeof(float), rt.stream));
    rt.labels.record_alloc(p, size_t(count) * sizeof(float), category);
    return p;
}
inline void release_async(Runtime& rt, float*& p) {
    if (!p) return;
    rt.labels.record_free(p);
    CUDA_CHECK(cudaFreeAsync(p, rt.stream));
    p = nullptr;
}

// Row-major C[m, n] = alpha op(A) op(B) + beta C, by the column-major identity C^T = op(B)^T op(A)^T.
inline void gemm(Runtime& rt, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasSgemm(rt.blas, opb, opa, n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc));
}

inline int blocks_for(long n) {
    return int((n + 255) / 256);
}

// ---- Generic element-wise kernels ----

// out = offset + scale * uniform(-1, 1), from a hash of the index (scale 0: a constant).
__global__ void fill_kernel(float* out, long n, unsigned seed, float scale, float offset) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    unsigned h = unsigned(i) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    out[i] = offset + scale * (float(h & 0xffffff) / float(0x800000) - 1.0f);
}
inline void fill(Runtime& rt, float* out, long n, unsigned seed, float scale, float offset) {
    fill_kernel<<<blocks_for(n), 256, 0, rt.stream>>>(out, n, seed, scale, offset);
    CUDA_CHECK_LAUNCH();
}

// y = alpha * x (y may be x).
__global__ void scale_kernel(long n, float alpha, const float* x, float* y) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = alpha * x[i];
}
// y = a * b element-wise.
__global__ void mul_kernel(long n, const float* a, const float* b, float* y) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = a[i] * b[i];
}

// out[r, c] += bias[c]
__global__ void add_bias_kernel(float* out, const float* bias, int rows, int cols) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < long(rows) * cols) out[i] += bias[i % cols];
}
__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}
// dx = dy where the forward output was positive.
__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) dx[i] = y[i] > 0 ? dy[i] : 0;
}

// Softmax cross-entropy of each row; dlogits = softmax - onehot (unscaled), loss[0] += mean loss.
__global__ void softmax_xent_kernel(const float* logits, const int* labels, float* dlogits, float* loss, int rows,
                                    int classes) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* z = logits + long(r) * classes;
    float top = z[0];
    for (int c = 1; c < classes; ++c) top = fmaxf(top, z[c]);
    float sum = 0;
    for (int c = 0; c < classes; ++c) sum += expf(z[c] - top);
    for (int c = 0; c < classes; ++c) dlogits[long(r) * classes + c] = expf(z[c] - top) / sum - (c == labels[r]);
    atomicAdd(loss, (logf(sum) + top - z[labels[r]]) / float(rows));
}

// ---- Options ----

// Integer options by name (each with a lower bound) and word options with their allowed values.
class OptionParser {
public:
    explicit OptionParser(const char* program) : program_(program) { tbdsample::set_program_name(program); }
    void integer(const char* name, int* value, int minimum) { ints_[name] = {value, minimum}; }
    void word(const char* name, std::string* value, std::vector<std::string> allowed) {
        words_[name] = {value, std::move(allowed)};
    }
    void parse(int argc, char** argv, const char* usage) {
        for (int i = 1; i < argc; ++i) {
            std::string arg = argv[i];
            if (arg == "--help") {
                std::printf("usage: %s %s\n", program_, usage);
                std::exit(0);
            }
            auto in = ints_.find(arg);
            auto wd = words_.find(arg);
            if (in == ints_.end() && wd == words_.end()) fail("unknown option: " + arg);
            if (i + 1 >= argc) fail("missing value for " + arg);
            std::string value = argv[++i];
            if (wd != words_.end()) {
                bool ok = false;
                for (const std::string& a : wd->second.allowed) ok |= a == value;
                if (!ok) fail("bad value for " + arg + ": '" + value + "'");
                *wd->second.value = value;
                continue;
            }
            char* end = nullptr;
            long number = std::strtol(value.c_str(), &end, 10);
            if (value.empty() || *end != '\0' || number < in->second.minimum || number > 1000000)
                fail(arg + " needs an integer >= " + std::to_string(in->second.minimum) + ", got '" + value + "'");
            *in->second.value = int(number);
        }
    }
    [[noreturn]] void fail(const std::string& message) const {
        std::fprintf(stderr, "%s: error: %s\n", program_, message.c_str());
        std::exit(2);
    }

private:
    struct Int {
        int* value;
        int minimum;
    };
    struct Word {
        std::string* value;
        std::vector<std::string> allowed;
    };
    const char* program_;
    std::map<std::string, Int> ints_;
    std::map<std::string, Word> words_;
};

// A learnable synthetic batch: features uniform in [-1, 1], the label the index of the largest of
// the first `classes` features.
inline void make_batch(unsigned& state, float* features, int* labels, int rows, int width, int classes) {
    for (int r = 0; r < rows; ++r) {
        int best = 0;
        for (int c = 0; c < width; ++c) {
            state = state * 1103515245u + 12345u;
            features[long(r) * width + c] = float((state >> 8) & 0xffff) / 32768.0f - 1.0f;
            if (c < classes && features[long(r) * width + c] > features[long(r) * width + best]) best = c;
        }
        labels[r] = best;
    }
}

}  // namespace style
