// xla_style_train: an MLP classifier trained with Adam the way a JAX program runs under XLA on a GPU.
//
// - Preallocation: at start ONE cudaMalloc of --prealloc-mb (JAX takes 75% of the device by
//   default) and a BFC sub-allocator inside it (xla_bfc_allocator.h); every buffer below is a chunk
//   of that region, which is freed only at exit.
// - Parameters, the Adam moments m and v and Adam's step count are device buffers of their own. One
//   jitted train step per iteration takes (params, m, v, count, x, y) and returns (new params, new m,
//   new v, new count, loss). --donate on (donate_argnums): the outputs alias the inputs, updated in
//   place; --donate off: the step gets new output chunks and the old ones are freed after it.
// - The batch: x and y are device_put each step into fresh chunks (host-to-device copies) and freed
//   after the step; the loss is a chunk of its own, read back by the host (float(loss)).
// - The temp buffer: each execution allocates ONE chunk for all intermediate values (forward
//   activations, activation gradients, parameter gradients, each GEMM's workspace) at static
//   offsets planned once (xla_buffer_plan.h); freed when the execution ends.
// - Kernels: one per fusion with XLA's names (xla_style_kernels.cuh); GEMMs through cuBLAS, each
//   handed its workspace slice with cublasSetWorkspace.
// Labels: the region is a `segment`; every buffer, and every value inside the temp chunk, an
// `alloc`/`free` with host times; one `span` per step.
#include "style_kit.cuh"
#include "xla_bfc_allocator.h"
#include "xla_buffer_plan.h"
#include "xla_style_kernels.cuh"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace xla_style;
using style::Runtime;
using tbdsample::Category;

struct Options {
    int iterations = 8, batch = 64, input = 64, hidden = 256, layers = 2, classes = 10;
    int prealloc_mb = 256, workspace_kb = 256, seed = 0;
    std::string donate = "on";
};

const char* kUsage =
    "[--iterations N] [--batch N] [--input N] [--hidden N] [--layers N (1-8 hidden layers)] [--classes N]\n"
    "       [--prealloc-mb N (the region preallocated at start, MiB)] [--workspace-kb N (each GEMM's workspace)]\n"
    "       [--donate on|off (the step's outputs alias its inputs)] [--seed N]";

Options parse(int argc, char** argv) {
    Options o;
    style::OptionParser parser("xla_style_train");
    parser.integer("--iterations", &o.iterations, 1);
    parser.integer("--batch", &o.batch, 1);
    parser.integer("--input", &o.input, 2);
    parser.integer("--hidden", &o.hidden, 1);
    parser.integer("--layers", &o.layers, 1);
    parser.integer("--classes", &o.classes, 2);
    parser.integer("--prealloc-mb", &o.prealloc_mb, 1);
    parser.integer("--workspace-kb", &o.workspace_kb, 1);
    parser.integer("--seed", &o.seed, 0);
    parser.word("--donate", &o.donate, {"on", "off"});
    parser.parse(argc, argv, kUsage);
    if (o.layers > kMaxLinearLayers - 1) parser.fail("--layers needs an integer <= 8, got " + std::to_string(o.layers));
    if (o.classes > o.input) parser.fail("--classes must not exceed --input (the label is the largest feature)");
    return o;
}

// The preallocated region and its BFC allocator; every chunk handed out is labelled.
class Device {
public:
    Device(Runtime& rt, std::size_t region_bytes) : rt_(rt), allocator_(region_bytes) {
        rt.labels.enable_timestamps();
        CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&region_), region_bytes));
        rt.labels.record_segment(region_, region_bytes);
    }
    ~Device() {
        rt_.labels.record_segment_free(region_);
        cudaFree(region_);
    }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    // A chunk of `bytes`; `labelled` false for the temp buffer, whose values are labelled one by one.
    char* chunk(std::size_t bytes, Category category, bool labelled = true) {
        std::size_t offset = allocator_.allocate(bytes);
        if (offset == BfcAllocator::kNoSpace)
            tbdsample::fail_message("out of memory in the preallocated region (raise --prealloc-mb)", __FILE__,
                                    __LINE__);
        if (labelled) rt_.labels.record_alloc(region_ + offset, bytes, category);
        return region_ + offset;
    }
    template <typename T>
    T* array(long count, Category category) {
        return reinterpret_cast<T*>(chunk(std::size_t(count) * sizeof(T), category));
    }
    void release(const void* p, bool labelled = true) {
        if (labelled) rt_.labels.record_free(p);
        allocator_.deallocate(std::size_t(static_cast<const char*>(p) - region_));
    }

private:
    Runtime& rt_;
    BfcAllocator allocator_;
    char* region_ = nullptr;
};

// The train state the step takes and returns: per parameter its value and both moments, and the count.
struct TrainState {
    std::vector<float*> params, m, v;
    int* count = nullptr;
};

class Trainer {
public:
    Trainer(Runtime& rt, Device& device, const Options& o) : rt_(rt), device_(device), o_(o) {
        widths_.push_back(o.input);
        for (int l = 0; l < o.layers; ++l) widths_.push_back(o.hidden);
        widths_.push_back(o.classes);
        for (int l = 0; l + 1 < int(widths_.size()); ++l) {
            sizes_.push_back(long(widths_[l]) * widths_[l + 1]);  // W_l [in, out]
            sizes_.push_back(widths_[l + 1]);                     // b_l
        }
        state_ = new_state(Category::weights, Category::optimizer_state);
        plan_.start_planning();
        step_ops(nullptr, nullptr, nullptr, state_);
        temp_bytes_ = plan_.assign_offsets();
        for (std::size_t p = 0; p < sizes_.size(); ++p) {
            float scale = p % 2 == 0 ? 1.0f / std::sqrt(float(widths_[p / 2])) : 0.0f;
            rng_uniform_fusion<<<blocks_for(sizes_[p]), 256, 0, rt_.stream>>>(
                state_.params[p], sizes_[p], unsigned(o.seed) * 97u + unsigned(p), scale);
            CUDA_CHECK_LAUNCH();
            for (float* moment : {state_.m[p], state_.v[p]}) {
                wrapped_broadcast<<<blocks_for(sizes_[p]), 256, 0, rt_.stream>>>(moment, sizes_[p]);
                CUDA_CHECK_LAUNCH();
            }
        }
        CUDA_CHECK(cudaMemsetAsync(state_.count, 0, sizeof(int), rt_.stream));
    }
    ~Trainer() { release_state(state_); }
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    std::size_t temp_bytes() const { return temp_bytes_; }

    // One call of the jitted step on a batch already on the device; returns the loss chunk.
    float* step(const float* x, const int* y) {
        const bool donate = o_.donate == "on";
        float* loss = device_.array<float>(1, Category::other);
        TrainState out = donate ? state_ : new_state(Category::weights, Category::optimizer_state);
        char* temp = device_.chunk(temp_bytes_, Category::other, false);
        plan_.start_step(temp, rt_.labels);
        step_ops(x, y, loss, out);
        device_.release(temp, false);
        if (!donate) {
            release_state(state_);
            state_ = out;
        }
        return loss;
    }

private:
    TrainState new_state(Category param_category, Category moment_category) {
        TrainState s;
        for (long size : sizes_) {
            s.params.push_back(device_.array<float>(size, param_category));
            s.m.push_back(device_.array<float>(size, moment_category));
            s.v.push_back(device_.array<float>(size, moment_category));
        }
        s.count = device_.array<int>(1, moment_category);
        return s;
    }
    void release_state(TrainState& s) {
        for (std::size_t p = 0; p < s.params.size(); ++p) {
            device_.release(s.params[p]);
            device_.release(s.m[p]);
            device_.release(s.v[p]);
        }
        device_.release(s.count);
        s = TrainState();
    }

    // Row-major C[m, n] = op(A) op(B) with this GEMM's own workspace value.
    void gemm(int workspace, bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
              float* c, int ldc) {
        CUBLAS_CHECK(cublasSetWorkspace(rt_.blas, plan_.at(workspace), std::size_t(o_.workspace_kb) * 1024));
        style::gemm(rt_, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    }
    int workspace_value() { return plan_.value(std::size_t(o_.workspace_kb) * 1024, Category::workspace); }

    // The whole executable, in launch order. `out` receives the updated state (the inputs with donation).
    void step_ops(const float* x, const int* y, float* loss, const TrainState& out) {
        const int layers = int(widths_.size()) - 1;
        std::vector<int> acts(std::size_t(layers), -1);  // ReLU outputs, then the logits
        forward(x, acts);
        std::vector<int> grads(sizes_.size(), -1);
        backward(x, y, loss, acts, grads);
        plan_.op({}, {}, [&] {
            loop_add_fusion_1<<<1, 32, 0, rt_.stream>>>(state_.count, out.count);
            CUDA_CHECK_LAUNCH();
        });
        for (std::size_t p = 0; p < sizes_.size(); ++p)
            plan_.op({}, {grads[p]}, [&] {
                AdamKernel adam = kAdam[p];  // launched by name: the host build rewrites name-launches only
                adam<<<blocks_for(sizes_[p]), 256, 0, rt_.stream>>>(
                    state_.params[p], plan_.at(grads[p]), state_.m[p], state_.v[p], out.count, out.params[p], out.m[p],
                    out.v[p], sizes_[p], 3e-3f);
                CUDA_CHECK_LAUNCH();
            });
    }

    void forward(const float* x, std::vector<int>& acts) {
        const int layers = int(widths_.size()) - 1, B = o_.batch;
        for (int l = 0; l < layers; ++l) {
            const int in = widths_[l], out = widths_[l + 1];
            const float* W = state_.params[std::size_t(2 * l)];
            const float* b = state_.params[std::size_t(2 * l + 1)];
            int dot = plan_.value(std::size_t(B) * out * sizeof(float), Category::activations);
            int workspace = workspace_value();
            const int previous = l == 0 ? -1 : acts[std::size_t(l - 1)];
            plan_.op({dot, workspace}, {previous}, [&] {
                const float* input = l == 0 ? x : plan_.at(previous);
                gemm(workspace, false, false, B, out, in, input, in, W, out, plan_.at(dot), out);
            });
            acts[std::size_t(l)] = plan_.value(std::size_t(B) * out * sizeof(float), Category::activations);
            const int act = acts[std::size_t(l)];
            plan_.op({act}, {dot}, [&] {
                auto kernel = l + 1 < layers ? kBiasRelu[l] : loop_add_fusion;
                kernel<<<blocks_for(long(B) * out), 256, 0, rt_.stream>>>(plan_.at(dot), b, plan_.at(act), B, out);
                CUDA_CHECK_LAUNCH();
            });
        }
    }

    // The loss, its gradient, and backward through every layer: parameter gradients into `grads`.
    void backward(const float* x, const int* y, float* loss, const std::vector<int>& acts, std::vector<int>& grads) {
        const int layers = int(widths_.size()) - 1, B = o_.batch, C = o_.classes;
        const int logits = acts.back();
        const int lse = plan_.value(std::size_t(B) * sizeof(float), Category::activations);
        plan_.op({lse}, {logits}, [&] {
            input_reduce_fusion<<<blocks_for(B), 256, 0, rt_.stream>>>(plan_.at(logits), plan_.at(lse), B, C);
            CUDA_CHECK_LAUNCH();
        });
        plan_.op({}, {logits, lse}, [&] {
            input_reduce_fusion_1<<<1, 1, 0, rt_.stream>>>(plan_.at(logits), plan_.at(lse), y, loss, B, C);
            CUDA_CHECK_LAUNCH();
        });
        int dz = plan_.value(std::size_t(B) * C * sizeof(float), Category::activations);
        plan_.op({dz}, {logits, lse}, [&] {
            loop_subtract_fusion<<<blocks_for(long(B) * C), 256, 0, rt_.stream>>>(plan_.at(logits), plan_.at(lse), y,
                                                                                  plan_.at(dz), B, C);
            CUDA_CHECK_LAUNCH();
        });
        for (int l = layers - 1; l >= 0; --l) dz = backward_layer(l, x, acts, dz, grads);
    }

    // One linear layer's backward from dz (the gradient of its output before the ReLU): its weight
    // and bias gradients, and the gradient of its input's pre-activation (returned; -1 for layer 0).
    int backward_layer(int l, const float* x, const std::vector<int>& acts, int dz, std::vector<int>& grads) {
        const int B = o_.batch, in = widths_[l], out = widths_[l + 1];
        const int previous = l == 0 ? -1 : acts[std::size_t(l - 1)];
        const std::size_t w = std::size_t(2 * l), bias = w + 1;
        grads[w] = plan_.value(std::size_t(sizes_[w]) * sizeof(float), Category::gradients);
        int workspace = workspace_value();
        plan_.op({grads[w], workspace}, {dz, previous}, [&] {
            const float* input = l == 0 ? x : plan_.at(previous);
            gemm(workspace, true, false, in, out, B, input, in, plan_.at(dz), out, plan_.at(grads[w]), out);
        });
        grads[bias] = plan_.value(std::size_t(sizes_[bias]) * sizeof(float), Category::gradients);
        plan_.op({grads[bias]}, {dz}, [&] {
            ColumnSumKernel column_sum = kColumnSum[l];
            column_sum<<<blocks_for(out), 256, 0, rt_.stream>>>(plan_.at(dz), plan_.at(grads[bias]), B, out);
            CUDA_CHECK_LAUNCH();
        });
        if (l == 0) return -1;
        const int da = plan_.value(std::size_t(B) * in * sizeof(float), Category::activations);
        workspace = workspace_value();
        plan_.op({da, workspace}, {dz}, [&] {
            gemm(workspace, false, true, B, in, out, plan_.at(dz), out, state_.params[w], out, plan_.at(da), in);
        });
        const int dz_in = plan_.value(std::size_t(B) * in * sizeof(float), Category::activations);
        plan_.op({dz_in}, {da, previous}, [&] {
            SelectKernel select = kSelect[l - 1];
            select<<<blocks_for(long(B) * in), 256, 0, rt_.stream>>>(plan_.at(da), plan_.at(previous),
                                                                             plan_.at(dz_in), long(B) * in);
            CUDA_CHECK_LAUNCH();
        });
        return dz_in;
    }

    Runtime& rt_;
    Device& device_;
    const Options& o_;
    std::vector<int> widths_;  // input, hidden..., classes
    std::vector<long> sizes_;  // floats per parameter: W0, b0, W1, b1, ...
    BufferPlan plan_;
    std::size_t temp_bytes_ = 0;
    TrainState state_;
};

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    Runtime rt;
    rt.open();
    float* staging = nullptr;  // pinned: features, then labels, then the loss read back
    const std::size_t feature_bytes = std::size_t(o.batch) * o.input * sizeof(float),
                      label_bytes = o.batch * sizeof(int);
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging), feature_bytes + label_bytes + sizeof(float)));
    float* host_loss = staging + std::size_t(o.batch) * (o.input + 1);
    float loss = 0, first_loss = 0;
    double elapsed_ms = 0;
    {
        Device device(rt, std::size_t(o.prealloc_mb) << 20);
        Trainer trainer(rt, device, o);
        std::printf("temp buffer: %zu bytes per step\n", trainer.temp_bytes());
        unsigned state = 2463534242u + unsigned(o.seed);
        auto started = std::chrono::steady_clock::now();
        for (int step = 0; step < o.iterations; ++step) {
            long long begin_ns = tbdsample::monotonic_ns();
            int* host_labels = reinterpret_cast<int*>(staging + std::size_t(o.batch) * o.input);
            style::make_batch(state, staging, host_labels, o.batch, o.input, o.classes);
            // jax.device_put(x), jax.device_put(y): fresh chunks, freed once the step has run.
            float* x = device.array<float>(long(o.batch) * o.input, Category::input);
            int* y = device.array<int>(o.batch, Category::input);
            CUDA_CHECK(cudaMemcpyAsync(x, staging, feature_bytes, cudaMemcpyHostToDevice, rt.stream));
            CUDA_CHECK(cudaMemcpyAsync(y, host_labels, label_bytes, cudaMemcpyHostToDevice, rt.stream));
            float* loss_chunk = trainer.step(x, y);
            CUDA_CHECK(cudaMemcpyAsync(host_loss, loss_chunk, sizeof(float), cudaMemcpyDeviceToHost, rt.stream));
            CUDA_CHECK(cudaStreamSynchronize(rt.stream));
            loss = *host_loss;
            if (step == 0) first_loss = loss;
            std::printf("step %d loss %.6f\n", step, double(loss));
            for (const void* p :
                 {static_cast<const void*>(loss_chunk), static_cast<const void*>(y), static_cast<const void*>(x)})
                device.release(p);
            rt.labels.record_span("training", step, begin_ns, tbdsample::monotonic_ns());
        }
        elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        CUDA_CHECK(cudaStreamSynchronize(rt.stream));
    }
    CUDA_CHECK(cudaFreeHost(staging));
    rt.close();
    std::printf("xla_style_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f\n", o.iterations,
                double(loss), elapsed_ms, double(first_loss));
    return 0;
}
