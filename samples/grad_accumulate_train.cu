// grad_accumulate_train: a classifier whose backward adds into the parameter gradients instead of
// writing them: weight gradients by GEMMs with beta = 1, bias and scale gradients by a kernel that
// adds the column sums of per-row values (the bias: the incoming gradient itself; the scale: the
// per-row partial products dy * x, written by another kernel into a temporary of the operation) into
// the gradient. Gradients are persistent and zeroed once per step (cudaMemsetAsync before the first
// micro-batch, a fill kernel, or after the update), micro-batches (--accumulate) add up, and a
// separate update (one kernel per parameter: SGD with momentum or Adam) follows backward.
//
// Layers: input -> L x [Linear -> ScaleShift (per-column gain and shift) -> ReLU] -> Linear -> softmax
// cross-entropy. Parameters, gradients, optimizer state and activations are allocated once before
// training (cudaMalloc); the scale gradient's per-row partials are a stream-ordered temporary
// (cudaMallocAsync / cudaFreeAsync) of each ScaleShift backward. No NVTX: iterations come from the
// repeating kernel sequence. Labels: one line per buffer and a `span` line per step.
#include "style_kit.cuh"

#include <chrono>
#include <deque>

using style::Category;
using style::Runtime;

namespace {

struct Options {
    int iterations = 6, batch = 32, input = 64, hidden = 128, layers = 2, classes = 8, accumulate = 1, seed = 1;
    std::string zero = "memset", optimizer = "sgd";
};

// dbias[c] += sum over rows of values[r, c]
__global__ void column_sum_add_kernel(const float* values, float* dbias, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sum = 0;
    for (int r = 0; r < rows; ++r) sum += values[long(r) * cols + c];
    dbias[c] += sum;
}
// y = x * gain[c] + shift[c]
__global__ void scale_shift_kernel(const float* x, const float* gain, const float* shift, float* y, int rows,
                                   int cols) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i < long(rows) * cols) y[i] = x[i] * gain[i % cols] + shift[i % cols];
}
// dx = dy * gain[c]; partial = dy * x (the per-row terms of the gain's gradient)
__global__ void scale_shift_backward_kernel(const float* dy, const float* x, const float* gain, float* dx,
                                            float* partial, int rows, int cols) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= long(rows) * cols) return;
    dx[i] = dy[i] * gain[i % cols];
    partial[i] = dy[i] * x[i];
}
__global__ void sgd_momentum_kernel(float* w, const float* g, float* velocity, long n, float lr, float momentum,
                                    float grad_scale) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    velocity[i] = momentum * velocity[i] + g[i] * grad_scale;
    w[i] -= lr * velocity[i];
}
__global__ void adam_kernel(float* w, const float* g, float* m, float* v, long n, float lr, float b1, float b2,
                            float grad_scale, int t) {
    long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    float grad = g[i] * grad_scale;
    m[i] = b1 * m[i] + (1 - b1) * grad;
    v[i] = b2 * v[i] + (1 - b2) * grad * grad;
    float mh = m[i] / (1 - powf(b1, float(t))), vh = v[i] / (1 - powf(b2, float(t)));
    w[i] -= lr * mh / (sqrtf(vh) + 1e-8f);
}

struct Param {
    float *value = nullptr, *grad = nullptr, *m = nullptr, *v = nullptr;
    long n = 0;
};

class Model {
public:
    Model(Runtime& rt, const Options& o) : rt_(rt), o_(o) {
        int width = o.input;
        for (int l = 0; l <= o.layers; ++l) {
            int out = l == o.layers ? o.classes : o.hidden;
            Layer layer{width, out, param(long(width) * out, 1.0f / std::sqrt(float(width)), 0), param(out, 0, 0)};
            layer.y = style::allocate(rt, long(o.batch) * out, Category::activations);
            if (l < o.layers) {
                layer.gain = param(out, 0, 1), layer.shift = param(out, 0, 0);
                layer.s = style::allocate(rt, long(o.batch) * out, Category::activations);
                layer.h = style::allocate(rt, long(o.batch) * out, Category::activations);
                layer.ds = style::allocate(rt, long(o.batch) * out, Category::activations);
            }
            layer.dy = style::allocate(rt, long(o.batch) * out, Category::activations);
            if (l > 0) layer.dx = style::allocate(rt, long(o.batch) * width, Category::activations);
            layers_.push_back(layer);
            width = out;
        }
    }
    // Forward and backward of one micro-batch; gradients are added into. Returns nothing: the loss
    // accumulates on the device.
    void forward_backward(const float* x, const int* labels, float* loss) {
        const int rows = o_.batch;
        const float* in = x;
        for (Layer& l : layers_) {
            style::gemm(rt_, false, true, rows, l.out, l.in, 1, in, l.in, l.w->value, l.in, 0, l.y, l.out);
            launch(style::add_bias_kernel, long(rows) * l.out, l.y, l.b->value, rows, l.out);
            if (!l.gain) break;
            launch(scale_shift_kernel, long(rows) * l.out, l.y, l.gain->value, l.shift->value, l.s, rows, l.out);
            launch(style::relu_kernel, long(rows) * l.out, l.s, l.h, long(rows) * l.out);
            in = l.h;
        }
        Layer& top = layers_.back();
        launch(style::softmax_xent_kernel, rows, top.y, labels, top.dy, loss, rows, o_.classes);
        launch(style::scale_kernel, long(rows) * o_.classes, long(rows) * o_.classes, 1.0f / float(rows), top.dy,
               top.dy);
        for (size_t i = layers_.size(); i-- > 0;) {
            Layer& l = layers_[i];
            const float* layer_in = i == 0 ? x : layers_[i - 1].h;
            if (l.gain) scale_shift_backward(l);
            style::gemm(rt_, true, false, l.out, l.in, rows, 1, l.dy, l.out, layer_in, l.in, 1, l.w->grad, l.in);
            launch(column_sum_add_kernel, l.out, l.dy, l.b->grad, rows, l.out);
            if (i == 0) break;
            style::gemm(rt_, false, false, rows, l.in, l.out, 1, l.dy, l.out, l.w->value, l.in, 0, l.dx, l.in);
            Layer& below = layers_[i - 1];
            launch(style::relu_backward_kernel, long(rows) * l.in, below.h, l.dx, below.ds, long(rows) * l.in);
        }
    }
    void zero_gradients() {
        for (Param& p : params_) {
            if (o_.zero == "kernel")
                style::fill(rt_, p.grad, p.n, 0, 0, 0);
            else
                CUDA_CHECK(cudaMemsetAsync(p.grad, 0, size_t(p.n) * sizeof(float), rt_.stream));
        }
    }
    void update(int step) {
        const float grad_scale = 1.0f / float(o_.accumulate);
        for (Param& p : params_) {
            if (o_.optimizer == "sgd")
                launch(sgd_momentum_kernel, p.n, p.value, p.grad, p.m, p.n, 0.05f, 0.9f, grad_scale);
            else
                launch(adam_kernel, p.n, p.value, p.grad, p.m, p.v, p.n, 1e-3f, 0.9f, 0.999f, grad_scale, step + 1);
        }
    }
    void release() {
        for (Layer& l : layers_)
            for (float** b : {&l.y, &l.s, &l.h, &l.ds, &l.dy, &l.dx}) style::release(rt_, *b);
        for (Param& p : params_)
            for (float** b : {&p.value, &p.grad, &p.m, &p.v}) style::release(rt_, *b);
    }

private:
    struct Layer {
        int in, out;
        Param *w, *b, *gain = nullptr, *shift = nullptr;
        float *y = nullptr, *s = nullptr, *h = nullptr, *ds = nullptr, *dy = nullptr, *dx = nullptr;
    };
    template <typename... Kernel, typename... Args>
    void launch(void (*kernel)(Kernel...), long n, Args... args) {
        kernel<<<style::blocks_for(n), 256, 0, rt_.stream>>>(args...);
        CUDA_CHECK_LAUNCH();
    }
    Param* param(long n, float scale, float offset) {
        Param p;
        p.n = n;
        p.value = style::allocate(rt_, n, Category::weights);
        style::fill(rt_, p.value, n, 977u * unsigned(params_.size() + 1) + unsigned(o_.seed), scale, offset);
        p.grad = style::allocate(rt_, n, Category::gradients);
        p.m = style::allocate(rt_, n, Category::optimizer_state);
        CUDA_CHECK(cudaMemsetAsync(p.m, 0, size_t(n) * sizeof(float), rt_.stream));
        if (o_.optimizer == "adam") {
            p.v = style::allocate(rt_, n, Category::optimizer_state);
            CUDA_CHECK(cudaMemsetAsync(p.v, 0, size_t(n) * sizeof(float), rt_.stream));
        }
        params_.push_back(p);
        return &params_.back();
    }
    // The ScaleShift backward: dgain += colsum(dy * x), dshift += colsum(dy), d(linear out) = dy * gain.
    void scale_shift_backward(Layer& l) {
        const int rows = o_.batch;
        float* partial = style::allocate_async(rt_, long(rows) * l.out, Category::workspace);
        launch(scale_shift_backward_kernel, long(rows) * l.out, l.ds, l.y, l.gain->value, l.dy, partial, rows, l.out);
        launch(column_sum_add_kernel, l.out, partial, l.gain->grad, rows, l.out);
        launch(column_sum_add_kernel, l.out, l.ds, l.shift->grad, rows, l.out);
        style::release_async(rt_, partial);
    }

    Runtime& rt_;
    Options o_;
    std::deque<Param> params_;  // layers point into it
    std::vector<Layer> layers_;
};

Options parse(int argc, char** argv) {
    Options o;
    style::OptionParser p("grad_accumulate_train");
    p.integer("--iterations", &o.iterations, 1);
    p.integer("--batch", &o.batch, 1);
    p.integer("--input", &o.input, 1);
    p.integer("--hidden", &o.hidden, 1);
    p.integer("--layers", &o.layers, 1);
    p.integer("--classes", &o.classes, 2);
    p.integer("--accumulate", &o.accumulate, 1);
    p.integer("--seed", &o.seed, 0);
    p.word("--zero", &o.zero, {"memset", "kernel", "after"});
    p.word("--optimizer", &o.optimizer, {"sgd", "adam"});
    p.parse(argc, argv,
            "[--iterations N] [--batch N] [--input N] [--hidden N] [--layers N] [--classes N]\n"
            "       [--accumulate N] [--zero memset|kernel|after] [--optimizer sgd|adam] [--seed N]");
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
        Model model(rt, o);
        float* x = style::allocate(rt, long(o.batch) * o.input, Category::input);
        float* labels = style::allocate(rt, o.batch, Category::input);
        float* loss_sum = style::allocate(rt, 1, Category::activations);
        if (o.zero == "after") model.zero_gradients();
        unsigned state = 2463534242u + unsigned(o.seed);
        auto started = std::chrono::steady_clock::now();
        for (int step = 0; step < o.iterations; ++step) {
            long long begin = tbdsample::monotonic_ns();
            if (o.zero != "after") model.zero_gradients();
            CUDA_CHECK(cudaMemsetAsync(loss_sum, 0, sizeof(float), rt.stream));
            for (int micro = 0; micro < o.accumulate; ++micro) {
                int* host_labels = reinterpret_cast<int*>(staging + long(o.batch) * o.input);
                style::make_batch(state, staging, host_labels, o.batch, o.input, o.classes);
                CUDA_CHECK(cudaMemcpyAsync(x, staging, size_t(o.batch) * o.input * sizeof(float),
                                           cudaMemcpyHostToDevice, rt.stream));
                CUDA_CHECK(cudaMemcpyAsync(labels, host_labels, size_t(o.batch) * sizeof(int), cudaMemcpyHostToDevice,
                                           rt.stream));
                model.forward_backward(x, reinterpret_cast<const int*>(labels), loss_sum);
            }
            model.update(step);
            if (o.zero == "after") model.zero_gradients();
            CUDA_CHECK(cudaMemcpyAsync(host_loss, loss_sum, sizeof(float), cudaMemcpyDeviceToHost, rt.stream));
            CUDA_CHECK(cudaStreamSynchronize(rt.stream));
            loss = *host_loss / float(o.accumulate);
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
    std::printf("grad_accumulate_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f\n", o.iterations,
                double(loss), elapsed_ms, double(first_loss));
    return 0;
}
