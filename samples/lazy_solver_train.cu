// lazy_solver_train: an MLP classifier written the way a C++ layer framework (Caffe-like) runs one:
// every buffer is a blob half (data or diff) allocated at its first use and kept for the whole run.
// Weights are allocated and filled inside the first forward, top blobs in the first forward, diffs
// (parameter gradients and activation gradients) in the first backward, the solver's history just
// before the first update. Backward accumulates into the parameter diffs (GEMM with beta = 1, a
// column-sum kernel adding into the bias diff), which the net zeroes at the start of every step.
// The solver updates through cuBLAS level-1 calls and small generic kernels, never one fused
// optimizer kernel:
//   SGD with momentum:  [diff += decay * w: axpy]  history = momentum * history + lr * diff
//                       (scal + axpy), diff = history (copy), then w -= diff (axpy) for all params.
//   Adam:               m = b1 m + (1-b1) g (scal + axpy); t = g * g (mul kernel); v = b2 v + (1-b2) t;
//                       t = sqrt(v) + eps, t = m / t (generic kernels); diff = lr_t t (scale
//                       kernel); w -= diff (axpy).
// No NVTX: iterations come from the repeating kernel sequence. Labels: one line per buffer and a
// `span` line per training step (samples/common/labels.h).
#include "style_kit.cuh"

#include <chrono>
#include <memory>

using style::Category;
using style::Runtime;

namespace {

struct Options {
    int iterations = 8, batch = 32, input = 64, hidden = 256, layers = 2, classes = 8, weight_decay = 0, seed = 1;
    std::string solver = "sgd";
};

// Half a blob allocated at its first mutable access (zeroed when it is a diff something adds into).
struct LazyBuffer {
    long n = 0;
    Category category = Category::other;
    float* ptr = nullptr;
    float* get(Runtime& rt, bool zero = false) {
        if (!ptr) {
            ptr = style::allocate(rt, n, category);
            if (zero) CUDA_CHECK(cudaMemsetAsync(ptr, 0, size_t(n) * sizeof(float), rt.stream));
        }
        return ptr;
    }
};

struct Blob {
    LazyBuffer data, diff;
    Blob(long n, Category data_category, Category diff_category) {
        data.n = diff.n = n;
        data.category = data_category, diff.category = diff_category;
    }
};

__global__ void column_sum_add_kernel(const float* dy, float* dbias, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sum = 0;
    for (int r = 0; r < rows; ++r) sum += dy[long(r) * cols + c];
    dbias[c] += sum;
}
__global__ void sqrt_add_kernel(long n, const float* x, float eps, float* y) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = sqrtf(x[i]) + eps;
}
__global__ void div_kernel(long n, const float* a, const float* b, float* y) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = a[i] / b[i];
}

// A layer: forward(bottom) -> top, backward(top diff) -> bottom diff and parameter diffs.
class Layer {
public:
    virtual ~Layer() = default;
    virtual void forward(Runtime& rt, Blob& bottom, Blob& top, int rows) = 0;
    virtual void backward(Runtime& rt, Blob& top, Blob& bottom, int rows, bool need_bottom_diff) = 0;
    std::vector<Blob*> params;
};

class InnerProduct : public Layer {
public:
    InnerProduct(int in, int out, unsigned seed)
        : in_(in),
          out_(out),
          seed_(seed),
          weight_(long(in) * out, Category::weights, Category::gradients),
          bias_(out, Category::weights, Category::gradients) {
        params = {&weight_, &bias_};
    }
    void forward(Runtime& rt, Blob& bottom, Blob& top, int rows) override {
        if (!weight_.data.ptr) {  // the filler runs at the first forward
            style::fill(rt, weight_.data.get(rt), weight_.data.n, seed_, 1.0f / std::sqrt(float(in_)), 0);
            style::fill(rt, bias_.data.get(rt), bias_.data.n, seed_ + 1, 0, 0);
        }
        float* y = top.data.get(rt);
        style::gemm(rt, false, true, rows, out_, in_, 1, bottom.data.get(rt), in_, weight_.data.get(rt), in_, 0, y,
                    out_);
        style::add_bias_kernel<<<style::blocks_for(long(rows) * out_), 256, 0, rt.stream>>>(y, bias_.data.get(rt), rows,
                                                                                            out_);
        CUDA_CHECK_LAUNCH();
    }
    void backward(Runtime& rt, Blob& top, Blob& bottom, int rows, bool need_bottom_diff) override {
        const float* dy = top.diff.get(rt);
        // Parameter diffs accumulate (beta = 1); the net zeroes them once per step.
        style::gemm(rt, true, false, out_, in_, rows, 1, dy, out_, bottom.data.get(rt), in_, 1,
                    weight_.diff.get(rt, true), in_);
        column_sum_add_kernel<<<style::blocks_for(out_), 256, 0, rt.stream>>>(dy, bias_.diff.get(rt, true), rows, out_);
        CUDA_CHECK_LAUNCH();
        if (need_bottom_diff)
            style::gemm(rt, false, false, rows, in_, out_, 1, dy, out_, weight_.data.get(rt), in_, 0,
                        bottom.diff.get(rt), in_);
    }

private:
    int in_, out_;
    unsigned seed_;
    Blob weight_, bias_;
};

class ReLU : public Layer {
public:
    void forward(Runtime& rt, Blob& bottom, Blob& top, int) override {
        style::relu_kernel<<<style::blocks_for(top.data.n), 256, 0, rt.stream>>>(bottom.data.get(rt), top.data.get(rt),
                                                                                 top.data.n);
        CUDA_CHECK_LAUNCH();
    }
    void backward(Runtime& rt, Blob& top, Blob& bottom, int, bool) override {
        style::relu_backward_kernel<<<style::blocks_for(top.data.n), 256, 0, rt.stream>>>(
            top.data.get(rt), top.diff.get(rt), bottom.diff.get(rt), top.data.n);
        CUDA_CHECK_LAUNCH();
    }
};

// The solver: history blobs made just before the first update, every step through cuBLAS level-1
// calls and generic kernels.
class Solver {
public:
    Solver(const Options& o, std::vector<Blob*> params) : o_(o), params_(std::move(params)) {}
    void step(Runtime& rt, int iteration) {
        for (size_t i = 0; i < params_.size(); ++i) {
            Blob& p = *params_[i];
            if (o_.weight_decay) {
                float decay = 1e-4f * float(o_.weight_decay);
                CUBLAS_CHECK(cublasSaxpy(rt.blas, int(p.data.n), &decay, p.data.get(rt), 1, p.diff.get(rt), 1));
            }
            if (o_.solver == "sgd")
                sgd_value(rt, i, p);
            else
                adam_value(rt, i, p, iteration);
        }
        const float minus_one = -1;
        for (Blob* p : params_)  // the net's update: data -= diff
            CUBLAS_CHECK(cublasSaxpy(rt.blas, int(p->data.n), &minus_one, p->diff.get(rt), 1, p->data.get(rt), 1));
    }

    void release(Runtime& rt) {
        for (LazyBuffer& h : history_) style::release(rt, h.ptr);
    }

private:
    float* history(Runtime& rt, size_t param, int slot) {
        size_t index = param * 3 + size_t(slot);
        if (history_.size() <= index) history_.resize(index + 1);
        if (!history_[index].ptr) {
            history_[index].n = params_[param]->data.n;
            history_[index].category = Category::optimizer_state;
        }
        return history_[index].get(rt, true);
    }
    void sgd_value(Runtime& rt, size_t i, Blob& p) {
        const float lr = 0.05f, momentum = 0.9f;
        int n = int(p.data.n);
        float* h = history(rt, i, 0);
        CUBLAS_CHECK(cublasSscal(rt.blas, n, &momentum, h, 1));
        CUBLAS_CHECK(cublasSaxpy(rt.blas, n, &lr, p.diff.get(rt), 1, h, 1));
        CUBLAS_CHECK(cublasScopy(rt.blas, n, h, 1, p.diff.get(rt), 1));
    }
    void adam_value(Runtime& rt, size_t i, Blob& p, int iteration) {
        const float b1 = 0.9f, b2 = 0.999f, one_minus_b1 = 1 - b1, one_minus_b2 = 1 - b2, eps = 1e-8f;
        int n = int(p.data.n);
        float *m = history(rt, i, 0), *v = history(rt, i, 1), *t = history(rt, i, 2), *g = p.diff.get(rt);
        CUBLAS_CHECK(cublasSscal(rt.blas, n, &b1, m, 1));
        CUBLAS_CHECK(cublasSaxpy(rt.blas, n, &one_minus_b1, g, 1, m, 1));
        style::mul_kernel<<<style::blocks_for(n), 256, 0, rt.stream>>>(n, g, g, t);
        CUBLAS_CHECK(cublasSscal(rt.blas, n, &b2, v, 1));
        CUBLAS_CHECK(cublasSaxpy(rt.blas, n, &one_minus_b2, t, 1, v, 1));
        sqrt_add_kernel<<<style::blocks_for(n), 256, 0, rt.stream>>>(n, v, eps, t);
        div_kernel<<<style::blocks_for(n), 256, 0, rt.stream>>>(n, m, t, t);
        double k = iteration + 1;
        float lr_t = float(1e-3 * std::sqrt(1 - std::pow(double(b2), k)) / (1 - std::pow(double(b1), k)));
        style::scale_kernel<<<style::blocks_for(n), 256, 0, rt.stream>>>(n, lr_t, t, g);
        CUDA_CHECK_LAUNCH();
    }

    Options o_;
    std::vector<Blob*> params_;
    std::vector<LazyBuffer> history_;
};

class Net {
public:
    Net(const Options& o) : o_(o) {
        blobs_.push_back(std::make_unique<Blob>(long(o.batch) * o.input, Category::input, Category::activations));
        int width = o.input;
        for (int l = 0; l <= o.layers; ++l) {
            int out = l == o.layers ? o.classes : o.hidden;
            layers_.push_back(std::make_unique<InnerProduct>(width, out, 7919u * unsigned(l + 1) + unsigned(o.seed)));
            blobs_.push_back(std::make_unique<Blob>(long(o.batch) * out, Category::activations, Category::activations));
            if (l < o.layers) {
                layers_.push_back(std::make_unique<ReLU>());
                blobs_.push_back(
                    std::make_unique<Blob>(long(o.batch) * out, Category::activations, Category::activations));
            }
            width = out;
        }
        for (auto& layer : layers_)
            for (Blob* p : layer->params) params_.push_back(p);
    }
    Blob& input() { return *blobs_.front(); }
    Blob& output() { return *blobs_.back(); }
    const std::vector<Blob*>& params() const { return params_; }
    void release(Runtime& rt) {
        for (auto& b : blobs_) style::release(rt, b->data.ptr), style::release(rt, b->diff.ptr);
        for (Blob* p : params_) style::release(rt, p->data.ptr), style::release(rt, p->diff.ptr);
    }
    void clear_param_diffs(Runtime& rt) {
        for (Blob* p : params_)
            if (p->diff.ptr) CUDA_CHECK(cudaMemsetAsync(p->diff.ptr, 0, size_t(p->diff.n) * sizeof(float), rt.stream));
    }
    void forward(Runtime& rt) {
        for (size_t l = 0; l < layers_.size(); ++l) layers_[l]->forward(rt, *blobs_[l], *blobs_[l + 1], o_.batch);
    }
    void backward(Runtime& rt) {
        for (size_t l = layers_.size(); l-- > 0;) layers_[l]->backward(rt, *blobs_[l + 1], *blobs_[l], o_.batch, l > 0);
    }

private:
    Options o_;
    std::vector<std::unique_ptr<Layer>> layers_;
    std::vector<std::unique_ptr<Blob>> blobs_;
    std::vector<Blob*> params_;
};

// The loss layer: labels (input), the scalar loss (its top, read back each step), and the gradient
// of the logits scaled by 1 / batch with cublasSscal.
struct SoftmaxLoss {
    LazyBuffer labels{0, Category::input, nullptr}, loss{1, Category::activations, nullptr};
    float forward_backward(Runtime& rt, Blob& logits, int rows, int classes, float* host_loss) {
        float* l = loss.get(rt);
        CUDA_CHECK(cudaMemsetAsync(l, 0, sizeof(float), rt.stream));
        float* dlogits = logits.diff.get(rt);
        style::softmax_xent_kernel<<<style::blocks_for(rows), 256, 0, rt.stream>>>(
            logits.data.get(rt), reinterpret_cast<const int*>(labels.get(rt)), dlogits, l, rows, classes);
        CUDA_CHECK_LAUNCH();
        const float inverse_batch = 1.0f / float(rows);
        CUBLAS_CHECK(cublasSscal(rt.blas, int(logits.diff.n), &inverse_batch, dlogits, 1));
        CUDA_CHECK(cudaMemcpyAsync(host_loss, l, sizeof(float), cudaMemcpyDeviceToHost, rt.stream));
        CUDA_CHECK(cudaStreamSynchronize(rt.stream));
        return *host_loss;
    }
};

Options parse(int argc, char** argv) {
    Options o;
    style::OptionParser p("lazy_solver_train");
    p.integer("--iterations", &o.iterations, 1);
    p.integer("--batch", &o.batch, 1);
    p.integer("--input", &o.input, 1);
    p.integer("--hidden", &o.hidden, 1);
    p.integer("--layers", &o.layers, 0);
    p.integer("--classes", &o.classes, 2);
    p.integer("--weight-decay", &o.weight_decay, 0);
    p.integer("--seed", &o.seed, 0);
    p.word("--solver", &o.solver, {"sgd", "adam"});
    p.parse(argc, argv,
            "[--iterations N] [--batch N] [--input N] [--hidden N] [--layers N] [--classes N]\n"
            "       [--solver sgd|adam] [--weight-decay N (x 1e-4)] [--seed N]");
    if (o.classes > o.input) p.fail("--classes must not exceed --input");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    Runtime rt;
    rt.open();
    float *staging = nullptr, *host_loss = nullptr;  // pinned: features, then labels
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging), size_t(o.batch) * (o.input + 1) * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_loss), sizeof(float)));
    float loss = 0, first_loss = 0;
    double elapsed_ms = 0;
    {
        Net net(o);
        SoftmaxLoss loss_layer;
        loss_layer.labels.n = o.batch;
        Solver solver(o, net.params());
        unsigned state = 2463534242u + unsigned(o.seed);
        auto started = std::chrono::steady_clock::now();
        for (int step = 0; step < o.iterations; ++step) {
            long long begin = tbdsample::monotonic_ns();
            int* labels = reinterpret_cast<int*>(staging + long(o.batch) * o.input);
            style::make_batch(state, staging, labels, o.batch, o.input, o.classes);
            net.clear_param_diffs(rt);
            CUDA_CHECK(cudaMemcpyAsync(net.input().data.get(rt), staging, size_t(o.batch) * o.input * sizeof(float),
                                       cudaMemcpyHostToDevice, rt.stream));
            CUDA_CHECK(cudaMemcpyAsync(loss_layer.labels.get(rt), labels, size_t(o.batch) * sizeof(int),
                                       cudaMemcpyHostToDevice, rt.stream));
            net.forward(rt);
            loss = loss_layer.forward_backward(rt, net.output(), o.batch, o.classes, host_loss);
            if (step == 0) first_loss = loss;
            net.backward(rt);
            solver.step(rt, step);
            CUDA_CHECK(cudaStreamSynchronize(rt.stream));
            rt.labels.record_span("training", step, begin, tbdsample::monotonic_ns());
        }
        elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        // Teardown: every blob freed at exit (the framework's destructors).
        for (LazyBuffer* b : {&loss_layer.labels, &loss_layer.loss}) style::release(rt, b->ptr);
        net.release(rt);
        solver.release(rt);
    }
    CUDA_CHECK(cudaFreeHost(host_loss));
    CUDA_CHECK(cudaFreeHost(staging));
    rt.close();
    std::printf("lazy_solver_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f\n", o.iterations,
                double(loss), elapsed_ms, double(first_loss));
    return 0;
}
