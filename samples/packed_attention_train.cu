// packed_attention_train: a sequence classifier of self-attention blocks whose attention operation
// packs its operands per call: it copies the column blocks of each head out of the fused QKV
// activation [rows, 3C] into fresh head-major buffers [heads, batch, seq, head_dim] with
// cudaMemcpy2DAsync (one copy per head and operand), runs cublasSgemmStridedBatched on them, copies
// the result's heads back into token-major columns the same way, and frees the packed buffers. Its
// backward packs again (Q, K, V and the incoming gradient), keeps the gradient of the scores in a
// fresh buffer, and unpacks dQ, dK, dV into the columns of the QKV gradient. Those per-call buffers
// are the operation's workspace (../shared/notes/definitions.md); everything else (parameters,
// gradients, activations) is allocated once before training.
//
// Block l: qkv = x W_qkv^T + b_qkv; ctx = attention(qkv); x_{l+1} = x + ctx W_o^T + b_o. Then mean
// pooling over the sequence, a linear classifier and softmax cross-entropy. Plain SGD, one kernel
// per parameter. --alloc sync|async: the packed buffers by cudaMalloc/cudaFree or by the
// stream-ordered pair. --nvtx: one "step N" range per step (default none: iterations by repetition).
#include "style_kit.cuh"

#include <nvtx3/nvToolsExt.h>

#include <chrono>

using style::Category;
using style::Runtime;

namespace {

struct Options {
    int iterations = 6, batch = 4, seq = 32, channels = 64, heads = 4, layers = 2, classes = 8, seed = 1;
    std::string alloc = "sync", nvtx = "none";
};

__global__ void softmax_rows_kernel(float* s, long rows, int cols) {
    long r = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (r >= rows) return;
    float* row = s + r * cols;
    float top = row[0], sum = 0;
    for (int c = 1; c < cols; ++c) top = fmaxf(top, row[c]);
    for (int c = 0; c < cols; ++c) sum += (row[c] = expf(row[c] - top));
    for (int c = 0; c < cols; ++c) row[c] /= sum;
}
// dS = P * (dP - rowsum(dP * P)), in place in dp.
__global__ void softmax_backward_kernel(const float* p, float* dp, long rows, int cols) {
    long r = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (r >= rows) return;
    float dot = 0;
    for (int c = 0; c < cols; ++c) dot += dp[r * cols + c] * p[r * cols + c];
    for (int c = 0; c < cols; ++c) dp[r * cols + c] = p[r * cols + c] * (dp[r * cols + c] - dot);
}
// out[r, c] = a[r, c] + b[r, c]
__global__ void add_kernel(const float* a, const float* b, float* out, long n) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
// pooled[b, c] = mean over t of x[b, t, c]; backward spreads dpooled / seq over the sequence.
__global__ void mean_pool_kernel(const float* x, float* pooled, int batch, int seq, int channels) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= long(batch) * channels) return;
    long b = i / channels, c = i % channels;
    float sum = 0;
    for (int t = 0; t < seq; ++t) sum += x[(b * seq + t) * channels + c];
    pooled[i] = sum / float(seq);
}
__global__ void mean_pool_backward_kernel(const float* dpooled, float* dx, int batch, int seq, int channels) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= long(batch) * seq * channels) return;
    long b = i / (long(seq) * channels), c = i % channels;
    dx[i] = dpooled[b * channels + c] / float(seq);
}
// db[c] = sum over rows of dy[r, c] (written whole)
__global__ void bias_grad_kernel(const float* dy, float* db, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sum = 0;
    for (int r = 0; r < rows; ++r) sum += dy[long(r) * cols + c];
    db[c] = sum;
}
__global__ void sgd_kernel(float* w, const float* g, long n, float lr) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) w[i] -= lr * g[i];
}

template <typename... Kernel, typename... Args>
void launch(Runtime& rt, void (*kernel)(Kernel...), long n, Args... args) {
    kernel<<<style::blocks_for(n), 256, 0, rt.stream>>>(args...);
    CUDA_CHECK_LAUNCH();
}

struct Param {
    float *value = nullptr, *grad = nullptr;
    long n = 0;
};

class Attention {
public:
    Attention(Runtime& rt, const Options& o) : rt_(rt), o_(o), d_(o.channels / o.heads) {
        probs_ = style::allocate(rt, batches() * o.seq * o.seq, Category::activations);  // kept for backward
    }
    ~Attention() { style::release(rt_, probs_); }
    // ctx [rows, C] from qkv [rows, 3C].
    void forward(const float* qkv, float* ctx) {
        float *q = pack(qkv, 0), *k = pack(qkv, 1), *v = pack(qkv, 2), *out = fresh(packed_size());
        batched(false, true, o_.seq, o_.seq, d_, 1.0f / std::sqrt(float(d_)), q, k, probs_, long(o_.seq) * o_.seq);
        launch(rt_, softmax_rows_kernel, batches() * o_.seq, probs_, batches() * o_.seq, o_.seq);
        batched(false, false, o_.seq, d_, o_.seq, 1, probs_, v, out, long(o_.seq) * d_);
        unpack(out, ctx, o_.channels, 0);
        for (float* p : {q, k, v, out}) drop(p);
    }
    // dqkv [rows, 3C] (written whole) from dctx [rows, C].
    void backward(const float* qkv, const float* dctx, float* dqkv) {
        float *q = pack(qkv, 0), *k = pack(qkv, 1), *v = pack(qkv, 2), *dout = pack_from(dctx, o_.channels, 0);
        float* ds = fresh(batches() * o_.seq * o_.seq);
        float *dq = fresh(packed_size()), *dk = fresh(packed_size()), *dv = fresh(packed_size());
        const float scale = 1.0f / std::sqrt(float(d_));
        batched(false, true, o_.seq, o_.seq, d_, 1, dout, v, ds, long(o_.seq) * o_.seq);   // dP = dO V^T
        batched(true, false, o_.seq, d_, o_.seq, 1, probs_, dout, dv, long(o_.seq) * d_);  // dV = P^T dO
        launch(rt_, softmax_backward_kernel, batches() * o_.seq, probs_, ds, batches() * o_.seq, o_.seq);
        batched(false, false, o_.seq, d_, o_.seq, scale, ds, k, dq, long(o_.seq) * d_);  // dQ = dS K
        batched(true, false, o_.seq, d_, o_.seq, scale, ds, q, dk, long(o_.seq) * d_);   // dK = dS^T Q
        for (int part = 0; part < 3; ++part) unpack(part == 0 ? dq : part == 1 ? dk : dv, dqkv, 3 * o_.channels, part);
        for (float* p : {q, k, v, dout, ds, dq, dk, dv}) drop(p);
    }

private:
    long batches() const { return long(o_.heads) * o_.batch; }
    long packed_size() const { return batches() * o_.seq * d_; }
    float* fresh(long n) {
        return o_.alloc == "async" ? style::allocate_async(rt_, n, Category::workspace)
                                   : style::allocate(rt_, n, Category::workspace);
    }
    void drop(float* p) {
        if (o_.alloc == "async")
            style::release_async(rt_, p);
        else
            style::release(rt_, p);
    }
    // Head h of column block `part` of src [rows, width] -> packed[h] ([batch * seq, d]).
    float* pack_from(const float* src, int width, int part) {
        float* packed = fresh(packed_size());
        const long rows = long(o_.batch) * o_.seq;
        for (int h = 0; h < o_.heads; ++h)
            CUDA_CHECK(cudaMemcpy2DAsync(packed + h * rows * d_, size_t(d_) * sizeof(float),
                                         src + long(part) * o_.channels + long(h) * d_, size_t(width) * sizeof(float),
                                         size_t(d_) * sizeof(float), size_t(rows), cudaMemcpyDeviceToDevice,
                                         rt_.stream));
        return packed;
    }
    float* pack(const float* qkv, int part) { return pack_from(qkv, 3 * o_.channels, part); }
    void unpack(const float* packed, float* dst, int width, int part) {
        const long rows = long(o_.batch) * o_.seq;
        for (int h = 0; h < o_.heads; ++h)
            CUDA_CHECK(cudaMemcpy2DAsync(dst + long(part) * o_.channels + long(h) * d_, size_t(width) * sizeof(float),
                                         packed + h * rows * d_, size_t(d_) * sizeof(float), size_t(d_) * sizeof(float),
                                         size_t(rows), cudaMemcpyDeviceToDevice, rt_.stream));
    }
    // Row-major C_i[m, n] = alpha op(A_i) op(B_i) for every (head, sequence); A and B are [seq, *]
    // matrices of one batch entry, `stride_c` apart in C.
    void batched(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, const float* b, float* c,
                 long stride_c) {
        const float beta = 0;
        int lda = ta ? m : k, ldb = tb ? k : n;
        long stride_a = long(m) * k, stride_b = long(k) * n;
        cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        CUBLAS_CHECK(cublasSgemmStridedBatched(rt_.blas, opb, opa, n, m, k, &alpha, b, ldb, stride_b, a, lda, stride_a,
                                               &beta, c, n, stride_c, int(batches())));
    }

    Runtime& rt_;
    Options o_;
    int d_;
    float* probs_ = nullptr;
};

class Model {
public:
    Model(Runtime& rt, const Options& o) : rt_(rt), o_(o), rows_(long(o.batch) * o.seq) {
        const int c = o.channels;
        for (int l = 0; l < o.layers; ++l) {
            Block b;
            b.w_qkv = param(3L * c * c, 1.0f / std::sqrt(float(c))), b.b_qkv = param(3L * c, 0);
            b.w_o = param(long(c) * c, 1.0f / std::sqrt(float(c))), b.b_o = param(c, 0);
            b.qkv = act(3 * rows_ * c), b.ctx = act(rows_ * c), b.out = act(rows_ * c), b.x_next = act(rows_ * c);
            b.dqkv = act(3 * rows_ * c), b.dctx = act(rows_ * c), b.dx = l > 0 ? act(rows_ * c) : nullptr;
            b.attention = new Attention(rt, o);
            blocks_.push_back(b);
        }
        w_c_ = param(long(o.classes) * c, 1.0f / std::sqrt(float(c))), b_c_ = param(o.classes, 0);
        pooled_ = act(long(o.batch) * c), logits_ = act(long(o.batch) * o.classes);
        dlogits_ = act(long(o.batch) * o.classes), dpooled_ = act(long(o.batch) * c), dtop_ = act(rows_ * c);
    }
    void step(const float* x, const int* labels, float* loss) {
        const int c = o_.channels;
        const float* in = x;
        for (Block& b : blocks_) {
            style::gemm(rt_, false, true, int(rows_), 3 * c, c, 1, in, c, b.w_qkv.value, c, 0, b.qkv, 3 * c);
            launch(rt_, style::add_bias_kernel, rows_ * 3 * c, b.qkv, b.b_qkv.value, int(rows_), 3 * c);
            b.attention->forward(b.qkv, b.ctx);
            style::gemm(rt_, false, true, int(rows_), c, c, 1, b.ctx, c, b.w_o.value, c, 0, b.out, c);
            launch(rt_, style::add_bias_kernel, rows_ * c, b.out, b.b_o.value, int(rows_), c);
            launch(rt_, add_kernel, rows_ * c, in, b.out, b.x_next, rows_ * c);
            in = b.x_next;
        }
        launch(rt_, mean_pool_kernel, long(o_.batch) * c, in, pooled_, o_.batch, o_.seq, c);
        style::gemm(rt_, false, true, o_.batch, o_.classes, c, 1, pooled_, c, w_c_.value, c, 0, logits_, o_.classes);
        launch(rt_, style::add_bias_kernel, long(o_.batch) * o_.classes, logits_, b_c_.value, o_.batch, o_.classes);
        launch(rt_, style::softmax_xent_kernel, o_.batch, logits_, labels, dlogits_, loss, o_.batch, o_.classes);
        launch(rt_, style::scale_kernel, long(o_.batch) * o_.classes, long(o_.batch) * o_.classes,
               1.0f / float(o_.batch), dlogits_, dlogits_);
        linear_backward(dlogits_, pooled_, w_c_, b_c_, o_.batch, c, o_.classes, dpooled_);
        launch(rt_, mean_pool_backward_kernel, rows_ * c, dpooled_, dtop_, o_.batch, o_.seq, c);
        const float* dnext = dtop_;
        for (size_t l = blocks_.size(); l-- > 0;) {
            Block& b = blocks_[l];
            const float* block_in = l == 0 ? x : blocks_[l - 1].x_next;
            linear_backward(dnext, b.ctx, b.w_o, b.b_o, int(rows_), c, c, b.dctx);
            b.attention->backward(b.qkv, b.dctx, b.dqkv);
            linear_backward(b.dqkv, block_in, b.w_qkv, b.b_qkv, int(rows_), c, 3 * c, b.dx);
            if (b.dx) launch(rt_, add_kernel, rows_ * c, b.dx, dnext, b.dx, rows_ * c);  // the residual path
            dnext = b.dx;
        }
        for (Param& p : params_) launch(rt_, sgd_kernel, p.n, p.value, p.grad, p.n, 0.05f);
    }
    void release() {
        for (Block& b : blocks_) {
            for (float** p : {&b.qkv, &b.ctx, &b.out, &b.x_next, &b.dqkv, &b.dctx, &b.dx}) style::release(rt_, *p);
            delete b.attention;
        }
        for (float** p : {&pooled_, &logits_, &dlogits_, &dpooled_, &dtop_}) style::release(rt_, *p);
        for (Param& p : params_) style::release(rt_, p.value), style::release(rt_, p.grad);
    }

private:
    struct Block {
        Param w_qkv, b_qkv, w_o, b_o;
        float *qkv, *ctx, *out, *x_next, *dqkv, *dctx, *dx;
        Attention* attention;
    };
    float* act(long n) { return style::allocate(rt_, n, Category::activations); }
    Param param(long n, float scale) {
        Param p{style::allocate(rt_, n, Category::weights), style::allocate(rt_, n, Category::gradients), n};
        style::fill(rt_, p.value, n, 977u * unsigned(params_.size() + 1) + unsigned(o_.seed), scale, 0);
        params_.push_back(p);
        return p;
    }
    // y = x W^T + b: dW = dy^T x, db = colsum(dy), dx = dy W (when wanted); all written whole.
    void linear_backward(const float* dy, const float* x, Param& w, Param& b, int rows, int in, int out, float* dx) {
        style::gemm(rt_, true, false, out, in, rows, 1, dy, out, x, in, 0, w.grad, in);
        launch(rt_, bias_grad_kernel, out, dy, b.grad, rows, out);
        if (dx) style::gemm(rt_, false, false, rows, in, out, 1, dy, out, w.value, in, 0, dx, in);
    }

    Runtime& rt_;
    Options o_;
    long rows_;
    std::vector<Param> params_;
    std::vector<Block> blocks_;
    Param w_c_, b_c_;
    float *pooled_, *logits_, *dlogits_, *dpooled_, *dtop_;
};

Options parse(int argc, char** argv) {
    Options o;
    style::OptionParser p("packed_attention_train");
    p.integer("--iterations", &o.iterations, 1);
    p.integer("--batch", &o.batch, 1);
    p.integer("--seq-len", &o.seq, 1);
    p.integer("--channels", &o.channels, 1);
    p.integer("--heads", &o.heads, 1);
    p.integer("--layers", &o.layers, 1);
    p.integer("--classes", &o.classes, 2);
    p.integer("--seed", &o.seed, 0);
    p.word("--alloc", &o.alloc, {"sync", "async"});
    p.word("--nvtx", &o.nvtx, {"none", "step"});
    p.parse(argc, argv,
            "[--iterations N] [--batch N] [--seq-len N] [--channels N] [--heads N] [--layers N]\n"
            "       [--classes N] [--alloc sync|async] [--nvtx none|step] [--seed N]");
    if (o.channels % o.heads != 0) p.fail("--heads must divide --channels");
    if (o.classes > o.channels) p.fail("--classes must not exceed --channels");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    Runtime rt;
    rt.open();
    const long rows = long(o.batch) * o.seq;
    float *staging = nullptr, *host_loss = nullptr;  // pinned: features, then labels
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging), size_t(rows * o.channels + o.batch) * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_loss), sizeof(float)));
    float loss = 0, first_loss = 0;
    double elapsed_ms = 0;
    {
        Model model(rt, o);
        float* x = style::allocate(rt, rows * o.channels, Category::input);
        float* labels = style::allocate(rt, o.batch, Category::input);
        float* loss_sum = style::allocate(rt, 1, Category::activations);
        unsigned state = 2463534242u + unsigned(o.seed);
        auto started = std::chrono::steady_clock::now();
        for (int step = 0; step < o.iterations; ++step) {
            long long begin = tbdsample::monotonic_ns();
            std::string name = "step " + std::to_string(step);
            if (o.nvtx == "step") nvtxRangePushA(name.c_str());
            int* host_labels = reinterpret_cast<int*>(staging + rows * o.channels);
            // Each sequence's class: the largest of the first `classes` features of its first token.
            style::make_batch(state, staging, host_labels, o.batch, o.seq * o.channels, o.classes);
            CUDA_CHECK(cudaMemcpyAsync(x, staging, size_t(rows * o.channels) * sizeof(float), cudaMemcpyHostToDevice,
                                       rt.stream));
            CUDA_CHECK(
                cudaMemcpyAsync(labels, host_labels, size_t(o.batch) * sizeof(int), cudaMemcpyHostToDevice, rt.stream));
            CUDA_CHECK(cudaMemsetAsync(loss_sum, 0, sizeof(float), rt.stream));
            model.step(x, reinterpret_cast<const int*>(labels), loss_sum);
            CUDA_CHECK(cudaMemcpyAsync(host_loss, loss_sum, sizeof(float), cudaMemcpyDeviceToHost, rt.stream));
            CUDA_CHECK(cudaStreamSynchronize(rt.stream));
            if (o.nvtx == "step") nvtxRangePop();
            loss = *host_loss;
            if (step == 0) first_loss = loss;
            rt.labels.record_span("training", step, begin, tbdsample::monotonic_ns());
        }
        elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        for (float** b : {&x, &labels, &loss_sum}) style::release(rt, *b);
        model.release();
    }
    CUDA_CHECK(cudaFreeHost(host_loss));
    CUDA_CHECK(cudaFreeHost(staging));
    rt.close();
    std::printf("packed_attention_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f\n", o.iterations,
                double(loss), elapsed_ms, double(first_loss));
    return 0;
}
