// transformer_temps_train: a causal transformer sequence classifier written like an eager framework
// without a caching allocator: every tensor is its own stream-ordered allocation (cudaMallocAsync /
// cudaFreeAsync), saved activations are released as backward consumes them, gradients are created
// by backward and dropped after the update (zero_grad(set_to_none=True)), and operations make
// temporaries of their own: attention packs Q, K, V (and in backward the incoming gradient) into
// head-major copies for its strided-batched GEMMs and unpacks the results, bias and layer-norm
// backward write per-block partial sums that are reduced right away, the loss op writes per-sample
// losses that it sums to one value. Kernels take a struct of pointers by value (transformer_ops.h).
//
// NVTX: one range per step, "ProfilerStep#N" (--step-name step: "step N", iteration: "iteration N").
// Every --val-every steps a validation pass (forward only, nothing saved), every --ckpt-every steps a
// checkpoint (every parameter copied to the host). Labels: one line per tensor (4 fields) and a
// `span` line per step, validation pass and checkpoint (samples/common/labels.h).
#include "common/check.h"
#include "common/labels.h"
#include "transformer_ops.h"

#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using tbdsample::Category;

namespace {

struct Options {
    int iterations = 8, batch = 8, seq = 32, channels = 64, heads = 4, layers = 2, vocab = 128, classes = 8;
    int val_every = 3, ckpt_every = 4, seed = 1;
    std::string step_name = "ProfilerStep#";
    bool gradient_check = false, overfit = false;  // overfit: every step trains on the first batch
};

// The device side of the program: the stream, cuBLAS and the label file every tensor reports to.
struct Runtime {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    tbdsample::LabelWriter labels;
};

// A device tensor that owns its allocation: created by cudaMallocAsync on the stream, released by
// cudaFreeAsync when it goes out of scope or is reset.
template <typename T>
class Buffer {
public:
    Buffer() = default;
    Buffer(Runtime& rt, long n, Category category) : rt_(&rt), n_(n) {
        CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), size_t(n) * sizeof(T), rt.stream));
        rt.labels.record_alloc(data_, size_t(n) * sizeof(T), category);
    }
    ~Buffer() { reset(); }
    Buffer(Buffer&& other) noexcept { *this = std::move(other); }
    Buffer& operator=(Buffer&& other) noexcept {
        if (this != &other) {
            reset();
            std::swap(rt_, other.rt_), std::swap(data_, other.data_), std::swap(n_, other.n_);
        }
        return *this;
    }
    void reset() {
        if (!data_) return;
        rt_->labels.record_free(data_);
        CUDA_CHECK(cudaFreeAsync(data_, rt_->stream));
        data_ = nullptr;
    }
    T* get() const { return data_; }
    long size() const { return n_; }
    explicit operator bool() const { return data_ != nullptr; }

private:
    Runtime* rt_ = nullptr;
    T* data_ = nullptr;
    long n_ = 0;
};
using Tensor = Buffer<float>;

Tensor activation(Runtime& rt, long n) {
    return Tensor(rt, n, Category::activations);
}
Tensor temporary(Runtime& rt, long n) {
    return Tensor(rt, n, Category::workspace);
}

// Row-major C[M, N] = alpha op(A) op(B) + beta C, `batch` matrices a stride apart.
void gemm(Runtime& rt, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, long stride_a,
          const float* b, int ldb, long stride_b, float* c, int ldc, long stride_c, int batch = 1) {
    const float beta = 0;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch == 1)
        CUBLAS_CHECK(cublasSgemm(rt.blas, opb, opa, n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc));
    else
        CUBLAS_CHECK(cublasSgemmStridedBatched(rt.blas, opb, opa, n, m, k, &alpha, b, ldb, stride_b, a, lda, stride_a,
                                               &beta, c, ldc, stride_c, batch));
}

struct Parameter {
    Tensor value, grad, momentum;
    long n = 0;
};

class ParameterStore {
public:
    explicit ParameterStore(Runtime& rt) : rt_(rt) {}
    // Initialised on the device: uniform(-scale, scale) + offset.
    Parameter* create(long n, float scale, float offset) {
        auto p = std::make_unique<Parameter>();
        p->n = n;
        p->value = Tensor(rt_, n, Category::weights);
        tt::fill(rt_.stream, {p->value.get(), n, 977u * unsigned(all_.size() + 1), scale, offset});
        all_.push_back(std::move(p));
        return all_.back().get();
    }
    // The gradient a backward op writes whole (created on first use in the step).
    float* grad(Parameter* p) {
        p->grad = Tensor(rt_, p->n, Category::gradients);
        return p->grad.get();
    }
    void sgd_step(float lr, float momentum, float weight_decay) {
        for (auto& p : all_) {
            bool first = !p->momentum;
            if (first) p->momentum = Tensor(rt_, p->n, Category::optimizer_state);
            tt::sgd(rt_.stream, {p->value.get(), p->grad.get(), p->momentum.get(), p->n, lr, momentum, weight_decay,
                                 first ? 1 : 0});
        }
        drop_gradients();  // zero_grad(set_to_none=True)
    }
    void drop_gradients() {
        for (auto& p : all_) p->grad.reset();
    }
    const std::vector<std::unique_ptr<Parameter>>& all() const { return all_; }
    void save(std::vector<float>& host) {
        for (auto& p : all_) {
            host.resize(size_t(p->n));
            CUDA_CHECK(cudaMemcpyAsync(host.data(), p->value.get(), size_t(p->n) * sizeof(float),
                                       cudaMemcpyDeviceToHost, rt_.stream));
            CUDA_CHECK(cudaStreamSynchronize(rt_.stream));
        }
    }

private:
    Runtime& rt_;
    std::vector<std::unique_ptr<Parameter>> all_;
};

// The bias gradient as per-block partial column sums reduced right away (the partials are the
// operation's temporary).
void bias_backward(Runtime& rt, ParameterStore& store, Parameter* bias, const float* dy, int rows, int cols) {
    const int rows_per_block = 32, blocks = (rows + rows_per_block - 1) / rows_per_block;
    Tensor partial = temporary(rt, long(blocks) * cols);
    tt::partial_column_sum(rt.stream, {dy, partial.get(), rows, cols, rows_per_block});
    tt::reduce_partials(rt.stream, {partial.get(), store.grad(bias), blocks, cols});
}

struct Linear {
    Parameter *weight, *bias;
    int in, out;
    Linear(ParameterStore& store, int in_features, int out_features)
        : weight(store.create(long(out_features) * in_features, 1.0f / std::sqrt(float(in_features)), 0)),
          bias(store.create(out_features, 0, 0)),
          in(in_features),
          out(out_features) {}
    Tensor forward(Runtime& rt, const float* x, int rows) const {
        Tensor y = activation(rt, long(rows) * out);
        gemm(rt, false, true, rows, out, in, 1, x, in, 0, weight->value.get(), in, 0, y.get(), out, 0);
        tt::add_bias(rt.stream, {y.get(), bias->value.get(), rows, out});
        return y;
    }
    Tensor backward(Runtime& rt, ParameterStore& store, const float* dy, const float* x, int rows) const {
        gemm(rt, true, false, out, in, rows, 1, dy, out, 0, x, in, 0, store.grad(weight), in, 0);
        bias_backward(rt, store, bias, dy, rows, out);
        Tensor dx = activation(rt, long(rows) * in);
        gemm(rt, false, false, rows, in, out, 1, dy, out, 0, weight->value.get(), in, 0, dx.get(), in, 0);
        return dx;
    }
};

struct LayerNorm {
    Parameter *gamma, *beta;
    int channels;
    LayerNorm(ParameterStore& store, int c) : gamma(store.create(c, 0, 1)), beta(store.create(c, 0, 0)), channels(c) {}
    struct Saved {
        Tensor y, mean, rstd;
    };
    Saved forward(Runtime& rt, const float* x, int rows) const {
        Saved s{activation(rt, long(rows) * channels), activation(rt, rows), activation(rt, rows)};
        tt::layernorm(rt.stream, {x, gamma->value.get(), beta->value.get(), s.y.get(), s.mean.get(), s.rstd.get(), rows,
                                  channels});
        return s;
    }
    Tensor backward(Runtime& rt, ParameterStore& store, const float* dy, const float* x, const Saved& s,
                    int rows) const {
        const int rows_per_block = 32, blocks = (rows + rows_per_block - 1) / rows_per_block;
        Tensor dx = activation(rt, long(rows) * channels);
        Tensor partial_gamma = temporary(rt, long(blocks) * channels),
               partial_beta = temporary(rt, long(blocks) * channels);
        tt::layernorm_backward(rt.stream, {dy, x, gamma->value.get(), s.mean.get(), s.rstd.get(), dx.get(),
                                           partial_gamma.get(), partial_beta.get(), rows, channels, rows_per_block});
        tt::reduce_partials(rt.stream, {partial_gamma.get(), store.grad(gamma), blocks, channels});
        tt::reduce_partials(rt.stream, {partial_beta.get(), store.grad(beta), blocks, channels});
        return dx;
    }
};

// Causal multi-head attention on a fused [B, T, 3C] projection. Q, K, V are packed head-major for
// the strided-batched GEMMs and freed as soon as the GEMMs have read them.
struct Attention {
    int batch, seq, channels, heads;
    int head_dim() const { return channels / heads; }
    long packed() const { return long(batch) * seq * channels; }
    tt::PackArgs pack(const float* in, float* out, int width, int offset) const {
        return {in, out, batch, seq, heads, channels, width, offset};
    }
    Tensor pack_copy(Runtime& rt, const float* in, int width, int offset) const {
        Tensor out = temporary(rt, packed());
        tt::pack_heads(rt.stream, pack(in, out.get(), width, offset));
        return out;
    }
    // Returns the context [B, T, C]; `probs` [B*H, T, T] is kept for backward.
    Tensor forward(Runtime& rt, const float* qkv, Tensor& probs) const {
        const int T = seq, D = head_dim(), BH = batch * heads;
        const long td = long(T) * D, tt_ = long(T) * T;
        Tensor q = pack_copy(rt, qkv, 3 * channels, 0), k = pack_copy(rt, qkv, 3 * channels, channels);
        probs = activation(rt, long(BH) * tt_);
        gemm(rt, false, true, T, T, D, 1, q.get(), D, td, k.get(), D, td, probs.get(), T, tt_, BH);
        q.reset(), k.reset();
        tt::causal_softmax(rt.stream, {probs.get(), BH * T, T, 1.0f / std::sqrt(float(D))});
        Tensor v = pack_copy(rt, qkv, 3 * channels, 2 * channels);
        Tensor context_heads = temporary(rt, packed());
        gemm(rt, false, false, T, D, T, 1, probs.get(), T, tt_, v.get(), D, td, context_heads.get(), D, td, BH);
        v.reset();
        Tensor context = activation(rt, packed());
        tt::unpack_heads(rt.stream, pack(context_heads.get(), context.get(), channels, 0));
        return context;
    }
    Tensor backward(Runtime& rt, const float* dcontext, const float* qkv, const float* probs) const {
        const int T = seq, D = head_dim(), BH = batch * heads;
        const long td = long(T) * D, tt_ = long(T) * T;
        const float scale = 1.0f / std::sqrt(float(D));
        Tensor dqkv = activation(rt, 3 * packed());
        Tensor dc = pack_copy(rt, dcontext, channels, 0), v = pack_copy(rt, qkv, 3 * channels, 2 * channels);
        Tensor dprobs = temporary(rt, long(BH) * tt_), dv = temporary(rt, packed());
        gemm(rt, false, true, T, T, D, 1, dc.get(), D, td, v.get(), D, td, dprobs.get(), T, tt_, BH);
        gemm(rt, true, false, T, D, T, 1, probs, T, tt_, dc.get(), D, td, dv.get(), D, td, BH);
        dc.reset(), v.reset();
        tt::unpack_heads(rt.stream, pack(dv.get(), dqkv.get(), 3 * channels, 2 * channels));
        dv.reset();
        tt::softmax_backward(rt.stream, {probs, dprobs.get(), BH * T, T});
        Tensor q = pack_copy(rt, qkv, 3 * channels, 0), k = pack_copy(rt, qkv, 3 * channels, channels);
        Tensor dq = temporary(rt, packed()), dk = temporary(rt, packed());
        gemm(rt, false, false, T, D, T, scale, dprobs.get(), T, tt_, k.get(), D, td, dq.get(), D, td, BH);
        gemm(rt, true, false, T, D, T, scale, dprobs.get(), T, tt_, q.get(), D, td, dk.get(), D, td, BH);
        tt::unpack_heads(rt.stream, pack(dq.get(), dqkv.get(), 3 * channels, 0));
        tt::unpack_heads(rt.stream, pack(dk.get(), dqkv.get(), 3 * channels, channels));
        return dqkv;
    }
};

// What one block keeps from forward for backward, released as backward uses it.
struct BlockSaved {
    LayerNorm::Saved ln1, ln2;
    Tensor qkv, probs, context, h1, fc1, gelu;
};

struct Block {
    LayerNorm ln1, ln2;
    Linear qkv, proj, fc1, fc2;
    Attention attention;
    Block(ParameterStore& s, const Options& o)
        : ln1(s, o.channels),
          ln2(s, o.channels),
          qkv(s, o.channels, 3 * o.channels),
          proj(s, o.channels, o.channels),
          fc1(s, o.channels, 4 * o.channels),
          fc2(s, 4 * o.channels, o.channels),
          attention{o.batch, o.seq, o.channels, o.heads} {}

    Tensor forward(Runtime& rt, const float* h, int rows, BlockSaved& s) const {
        const long n = long(rows) * ln1.channels;
        s.ln1 = ln1.forward(rt, h, rows);
        s.qkv = qkv.forward(rt, s.ln1.y.get(), rows);
        s.context = attention.forward(rt, s.qkv.get(), s.probs);
        Tensor attended = proj.forward(rt, s.context.get(), rows);
        s.h1 = activation(rt, n);
        tt::add(rt.stream, {h, attended.get(), s.h1.get(), n});
        attended.reset();
        s.ln2 = ln2.forward(rt, s.h1.get(), rows);
        s.fc1 = fc1.forward(rt, s.ln2.y.get(), rows);
        s.gelu = activation(rt, 4 * n);
        tt::gelu(rt.stream, {s.fc1.get(), nullptr, s.gelu.get(), 4 * n});
        Tensor mlp = fc2.forward(rt, s.gelu.get(), rows);
        Tensor out = activation(rt, n);
        tt::add(rt.stream, {s.h1.get(), mlp.get(), out.get(), n});
        return out;
    }

    // dh: gradient of the block's output; returns the gradient of its input h.
    Tensor backward(Runtime& rt, ParameterStore& store, Tensor dh, const float* h, int rows, BlockSaved& s) const {
        const long n = long(rows) * ln1.channels;
        Tensor dgelu = fc2.backward(rt, store, dh.get(), s.gelu.get(), rows);
        s.gelu.reset();
        Tensor dfc1 = activation(rt, 4 * n);
        tt::gelu_backward(rt.stream, {s.fc1.get(), dgelu.get(), dfc1.get(), 4 * n});
        dgelu.reset(), s.fc1.reset();
        Tensor dln2 = fc1.backward(rt, store, dfc1.get(), s.ln2.y.get(), rows);
        dfc1.reset(), s.ln2.y.reset();
        Tensor dx2 = ln2.backward(rt, store, dln2.get(), s.h1.get(), s.ln2, rows);
        dln2.reset(), s.h1.reset(), s.ln2 = {};
        Tensor dh1 = activation(rt, n);
        tt::add(rt.stream, {dh.get(), dx2.get(), dh1.get(), n});
        dh.reset(), dx2.reset();
        Tensor dcontext = proj.backward(rt, store, dh1.get(), s.context.get(), rows);
        s.context.reset();
        Tensor dqkv = attention.backward(rt, dcontext.get(), s.qkv.get(), s.probs.get());
        dcontext.reset(), s.probs.reset();
        Tensor dln1 = qkv.backward(rt, store, dqkv.get(), s.ln1.y.get(), rows);
        dqkv.reset(), s.qkv.reset(), s.ln1.y.reset();
        Tensor dx1 = ln1.backward(rt, store, dln1.get(), h, s.ln1, rows);
        dln1.reset(), s.ln1 = {};
        Tensor dinput = activation(rt, n);
        tt::add(rt.stream, {dh1.get(), dx1.get(), dinput.get(), n});
        return dinput;
    }
};

class Model {
public:
    Model(Runtime& rt, const Options& o)
        : rt_(rt),
          o_(o),
          store_(rt),
          embedding_(store_.create(long(o.vocab) * o.channels, 0.1f, 0)),
          position_(store_.create(long(o.seq) * o.channels, 0.1f, 0)),
          classifier_(store_, o.channels, o.classes) {
        for (int l = 0; l < o.layers; ++l) blocks_.push_back(std::make_unique<Block>(store_, o));
    }

    // One forward (and with `train` backward) pass; returns the device scalar holding the summed loss.
    void step(const int* tokens, const int* labels, float* loss_sum, bool train, float* host_loss, bool update = true) {
        const int rows = o_.batch * o_.seq;
        const long n = long(rows) * o_.channels;
        std::vector<Tensor> hidden;
        hidden.push_back(activation(rt_, n));
        tt::embedding(rt_.stream, {tokens, embedding_->value.get(), position_->value.get(), hidden[0].get(), rows,
                                   o_.seq, o_.channels});
        std::vector<BlockSaved> saved(blocks_.size());
        for (size_t l = 0; l < blocks_.size(); ++l) {
            hidden.push_back(blocks_[l]->forward(rt_, hidden[l].get(), rows, saved[l]));
            if (!train) saved[l] = {}, hidden[l].reset();  // inference: nothing is kept
        }
        Tensor pooled = activation(rt_, long(o_.batch) * o_.channels);
        tt::mean_pool(rt_.stream, {hidden.back().get(), pooled.get(), o_.batch, o_.seq, o_.channels});
        hidden.back().reset();
        Tensor logits = classifier_.forward(rt_, pooled.get(), o_.batch);
        Tensor dlogits = train ? activation(rt_, long(o_.batch) * o_.classes) : Tensor();
        {
            Tensor losses = temporary(rt_, o_.batch);  // the loss op's own: summed right away
            tt::cross_entropy(rt_.stream, {logits.get(), labels, losses.get(), dlogits.get(), o_.batch, o_.classes});
            tt::sum(rt_.stream, {losses.get(), loss_sum, o_.batch});
        }
        // loss.item(): the host waits for the loss in the middle of the step.
        CUDA_CHECK(cudaMemcpyAsync(host_loss, loss_sum, sizeof(float), cudaMemcpyDeviceToHost, rt_.stream));
        CUDA_CHECK(cudaStreamSynchronize(rt_.stream));
        *host_loss /= float(o_.batch);
        if (!train) return;
        logits.reset();
        Tensor dpooled = classifier_.backward(rt_, store_, dlogits.get(), pooled.get(), o_.batch);
        dlogits.reset(), pooled.reset();
        Tensor dh = activation(rt_, n);
        tt::mean_pool_backward(rt_.stream, {dpooled.get(), dh.get(), o_.batch, o_.seq, o_.channels});
        dpooled.reset();
        for (size_t l = blocks_.size(); l-- > 0;) {
            dh = blocks_[l]->backward(rt_, store_, std::move(dh), hidden[l].get(), rows, saved[l]);
            hidden[l].reset();
        }
        tt::embedding_backward(rt_.stream, {tokens, dh.get(), store_.grad(embedding_), store_.grad(position_), rows,
                                            o_.seq, o_.channels, o_.vocab});
        dh.reset();
        if (update) store_.sgd_step(0.05f, 0.9f, 1e-4f);
    }

    // One batch: every parameter is moved by eps along its unit gradient direction; the mean loss
    // must change by eps * |gradient| (central differences). Returns the parameters that fail.
    int gradient_check(const int* tokens, const int* labels, float* loss_sum, float* host_loss) {
        step(tokens, labels, loss_sum, true, host_loss, false);
        const double eps = 1e-2;
        int bad = 0, index = 0;
        double worst = 0;
        for (const auto& p : store_.all()) {
            std::vector<float> w(static_cast<size_t>(p->n)), g(w.size()), moved(w.size());
            CUDA_CHECK(cudaMemcpy(w.data(), p->value.get(), w.size() * sizeof(float), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(g.data(), p->grad.get(), g.size() * sizeof(float), cudaMemcpyDeviceToHost));
            double norm = 0;
            for (float x : g) norm += double(x) * x;
            norm = std::sqrt(norm);
            double side[2];
            for (int s = 0; s < 2; ++s) {
                double shift = (s == 0 ? eps : -eps) / (norm > 0 ? norm : 1);
                for (size_t j = 0; j < w.size(); ++j) moved[j] = float(w[j] + shift * g[j]);
                CUDA_CHECK(cudaMemcpy(p->value.get(), moved.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
                step(tokens, labels, loss_sum, false, host_loss);
                side[s] = *host_loss;
            }
            CUDA_CHECK(cudaMemcpy(p->value.get(), w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
            double slope = (side[0] - side[1]) / (2 * eps), error = std::fabs(slope - norm) / (norm + 1e-2);
            worst = std::max(worst, error);
            if (error > 0.02) {
                std::fprintf(stderr, "transformer_temps_train: gradient check: parameter %d: |gradient| %g, slope %g\n",
                             index, norm, slope);
                ++bad;
            }
            ++index;
        }
        store_.drop_gradients();
        std::printf("transformer_temps_train: gradient_check tensors=%d failed=%d worst_relative_error=%.5f\n", index,
                    bad, worst);
        return bad;
    }
    void save(std::vector<float>& host) { store_.save(host); }

private:
    Runtime& rt_;
    Options o_;
    ParameterStore store_;
    Parameter *embedding_, *position_;
    std::vector<std::unique_ptr<Block>> blocks_;
    Linear classifier_;
};

// Sequences of random tokens; the class is the first token's residue, so the model must attend back.
void make_batch(const Options& o, unsigned& state, int* tokens, int* labels) {
    for (int b = 0; b < o.batch; ++b) {
        for (int t = 0; t < o.seq; ++t) {
            state = state * 1103515245u + 12345u;
            tokens[b * o.seq + t] = int((state >> 9) % unsigned(o.vocab));
        }
        labels[b] = tokens[b * o.seq] % o.classes;
    }
}

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "transformer_temps_train: error: %s\n", message.c_str());
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help") {
            std::printf(
                "usage: transformer_temps_train [--iterations N] [--batch N] [--seq-len N] [--channels N]\n"
                "       [--heads N] [--layers N] [--val-every N] [--ckpt-every N]\n"
                "       [--step-name profiler|step|iteration] [--seed N]\n");
            std::exit(0);
        }
        if (arg == "--gradient-check" || arg == "--overfit") {
            (arg == "--overfit" ? o.overfit : o.gradient_check) = true;
            continue;
        }
        if (i + 1 >= argc) usage_error("unknown option or missing value: " + arg);
        std::string value = argv[++i];
        if (arg == "--step-name") {
            if (value == "profiler")
                o.step_name = "ProfilerStep#";
            else if (value == "step")
                o.step_name = "step ";
            else if (value == "iteration")
                o.step_name = "iteration ";
            else
                usage_error("--step-name must be profiler, step or iteration, got '" + value + "'");
            continue;
        }
        char* end = nullptr;
        long number = std::strtol(value.c_str(), &end, 10);
        bool zero_ok = arg == "--val-every" || arg == "--ckpt-every" || arg == "--seed";
        if (value.empty() || *end != '\0' || number < (zero_ok ? 0 : 1) || number > 100000)
            usage_error(arg + " needs a " + (zero_ok ? "non-negative" : "positive") + " integer, got '" + value + "'");
        int v = int(number);
        if (arg == "--iterations")
            o.iterations = v;
        else if (arg == "--batch")
            o.batch = v;
        else if (arg == "--seq-len")
            o.seq = v;
        else if (arg == "--channels")
            o.channels = v;
        else if (arg == "--heads")
            o.heads = v;
        else if (arg == "--layers")
            o.layers = v;
        else if (arg == "--val-every")
            o.val_every = v;
        else if (arg == "--ckpt-every")
            o.ckpt_every = v;
        else if (arg == "--seed")
            o.seed = v;
        else
            usage_error("unknown option: " + arg);
    }
    if (o.channels % o.heads != 0) usage_error("--heads must divide --channels");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    tbdsample::set_program_name("transformer_temps_train");
    Options o = parse(argc, argv);
    Runtime rt;
    CUDA_CHECK(cudaStreamCreateWithFlags(&rt.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&rt.blas));
    CUBLAS_CHECK(cublasSetStream(rt.blas, rt.stream));
    int* staging = nullptr;  // pinned: tokens, then labels
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging), size_t(o.batch) * (o.seq + 1) * sizeof(int)));
    float* host_loss = nullptr;
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_loss), sizeof(float)));
    float loss = 0, first_loss = 0;
    double elapsed_ms = 0;
    int exit_status = 0;
    {
        Model model(rt, o);
        Buffer<float> loss_sum(rt, 1, Category::other);  // the reported value, read back every pass
        unsigned state = 2463534242u + unsigned(o.seed);
        const unsigned first_state = state;
        std::vector<float> checkpoint;
        int validations = 0, checkpoints = 0;
        auto started = std::chrono::steady_clock::now();
        auto pass = [&](bool train) {
            make_batch(o, state, staging, staging + o.batch * o.seq);
            Buffer<int> tokens(rt, long(o.batch) * o.seq, Category::input), labels(rt, o.batch, Category::input);
            CUDA_CHECK(cudaMemcpyAsync(tokens.get(), staging, size_t(tokens.size()) * sizeof(int),
                                       cudaMemcpyHostToDevice, rt.stream));
            CUDA_CHECK(cudaMemcpyAsync(labels.get(), staging + o.batch * o.seq, size_t(o.batch) * sizeof(int),
                                       cudaMemcpyHostToDevice, rt.stream));
            model.step(tokens.get(), labels.get(), loss_sum.get(), train, host_loss);
            return *host_loss;
        };
        if (o.gradient_check) {
            make_batch(o, state, staging, staging + o.batch * o.seq);
            Buffer<int> tokens(rt, long(o.batch) * o.seq, Category::input), labels(rt, o.batch, Category::input);
            CUDA_CHECK(cudaMemcpy(tokens.get(), staging, size_t(tokens.size()) * sizeof(int), cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemcpy(labels.get(), staging + o.batch * o.seq, size_t(o.batch) * sizeof(int),
                                  cudaMemcpyHostToDevice));
            exit_status = model.gradient_check(tokens.get(), labels.get(), loss_sum.get(), host_loss) ? 1 : 0;
            o.iterations = 0;
        }
        for (int step = 0; step < o.iterations; ++step) {
            long long begin = tbdsample::monotonic_ns();
            std::string name = o.step_name + std::to_string(step);
            nvtxRangePushA(name.c_str());
            if (o.overfit) state = first_state;
            loss = pass(true);
            if (step == 0) first_loss = loss;
            CUDA_CHECK(cudaStreamSynchronize(rt.stream));
            nvtxRangePop();
            rt.labels.record_span("training", step, begin, tbdsample::monotonic_ns());
            if (o.val_every && (step + 1) % o.val_every == 0) {
                begin = tbdsample::monotonic_ns();
                float validation = pass(false);
                std::printf("transformer_temps_train: step %d validation loss %.4f\n", step, double(validation));
                rt.labels.record_span("validation", validations++, begin, tbdsample::monotonic_ns());
            }
            if (o.ckpt_every && (step + 1) % o.ckpt_every == 0) {
                begin = tbdsample::monotonic_ns();
                model.save(checkpoint);
                rt.labels.record_span("checkpoint", checkpoints++, begin, tbdsample::monotonic_ns());
            }
        }
        elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    }
    CUDA_CHECK(cudaStreamSynchronize(rt.stream));
    CUDA_CHECK(cudaFreeHost(host_loss));
    CUDA_CHECK(cudaFreeHost(staging));
    CUBLAS_CHECK(cublasDestroy(rt.blas));
    CUDA_CHECK(cudaStreamDestroy(rt.stream));
    std::printf("transformer_temps_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f\n",
                o.iterations, double(loss), elapsed_ms, double(first_loss));
    return exit_status;
}
