// nvtx_pool_train: a multi-layer perceptron trained out of one arena whose sub-allocator tells tools
// what lies inside it with NVTX's memory extension (nvtx3/nvToolsExtMem.h): the arena is a heap
// (nvtxMemHeapRegister), every tensor a region (nvtxMemRegionsRegister) with a name
// (nvtxMemRegionsName), unregistered when the tensor is freed (nvtxMemRegionsUnregister); the heap
// is unregistered before the arena is freed.
//
// Names (--names category, the default) begin with the tensor's category as docs/tagging.md
// ("Regions the program names") defines it: "weights:fc0.W", "gradients:fc0.W",
// "optimizer_state:fc0.W.velocity", "input:x", "activations:fc0.z". Some tensors are named without
// one, on purpose: the activation gradients of backward ("dact.fc1", "dpre.fc1"), the per-sample
// losses ("row_loss", a workspace) and the loss total ("loss_total", other). --names plain drops
// every prefix ("fc0.W"); --names none names no region.
//
// Per step: the batch is copied into the input tensors (kept all run, a static input buffer), forward
// (SGEMM + bias + ReLU per layer), softmax/cross-entropy, backward into persistent gradients, SGD
// with momentum. NVTX range "train_step" around each step. With --last-batch N the last step has
// N rows: the input regions are resized to them (nvtxMemRegionsResize).
//
// Labels (samples/common/labels.h, with host times): the arena is a `segment`, every tensor an
// `alloc` at its address when allocated and a `free` when freed; a resize is a free and an alloc at
// the same address with the new size. A `span` per training step.
#include "common/check.h"
#include "common/kernels.h"
#include "common/labels.h"
#include "common/options.h"

#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using tbdsample::Category;

namespace {

enum class Naming { category, plain, none };
enum class Update { kernel, blas };

struct Options {
    int iterations = 6;
    int batch = 32;
    int input = 128;
    int hidden = 256;
    int layers = 2;
    int classes = 10;
    int last_batch = 0;  // 0: every step has `batch` rows
    long arena_mib = 16;
    Naming names = Naming::category;
    Update update = Update::kernel;
};

// One tensor handed out by the arena.
struct Block {
    std::size_t offset = 0, bytes = 0;
};

// First-fit sub-allocator over one cudaMalloc, 256-byte aligned, coalescing on free; every tensor it
// hands out is an NVTX region of its heap, named as the program says.
class Arena {
public:
    Arena(std::size_t bytes, Naming naming, tbdsample::LabelWriter& labels)
        : bytes_(bytes), naming_(naming), labels_(labels) {
        CUDA_CHECK(cudaMalloc(&base_, bytes));
        labels_.record_segment(base_, bytes);
        free_.push_back({0, bytes});
        domain_ = nvtxDomainCreateA("nvtx_pool_train");
        nvtxMemVirtualRangeDesc_t range{bytes, base_};
        nvtxMemHeapDesc_t desc{};
        desc.extCompatID = NVTX_EXT_COMPATID_MEM;
        desc.structSize = sizeof desc;
        desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
        desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        desc.typeSpecificDescSize = sizeof range;
        desc.typeSpecificDesc = &range;
        desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
        desc.message.ascii = "training arena";
        heap_ = nvtxMemHeapRegister(domain_, &desc);
    }
    ~Arena() {
        nvtxMemHeapUnregister(domain_, heap_);
        labels_.record_segment_free(base_);
        cudaFree(base_);
        nvtxDomainDestroy(domain_);
    }
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    // A tensor of `bytes`, registered and named "CATEGORY:NAME" (or as --names says).
    template <typename T>
    T* allocate(std::size_t count, Category category, const std::string& name, bool prefixed = true) {
        const std::size_t bytes = count * sizeof(T);
        void* p = take(bytes);
        labels_.record_alloc(p, bytes, category);
        register_region(p, bytes);
        name_region(p,
                    naming_ == Naming::category && prefixed ? tbdsample::category_name(category) + (":" + name) : name);
        return static_cast<T*>(p);
    }

    void release(const void* p) {
        labels_.record_free(p);
        nvtxMemRegionRef_t ref;
        ref.pointer = p;
        nvtxMemRegionsUnregisterBatch_t batch{};
        batch.extCompatID = NVTX_EXT_COMPATID_MEM;
        batch.structSize = sizeof batch;
        batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
        batch.refCount = 1;
        batch.refElementSize = sizeof ref;
        batch.refElements = &ref;
        nvtxMemRegionsUnregister(domain_, &batch);
        give_back(p);
    }

    // The tensor at `p` now holds `bytes` (no more than it was given): its region shrinks.
    void resize(const void* p, std::size_t bytes, Category category) {
        labels_.record_free(p);
        labels_.record_alloc(p, bytes, category);
        nvtxMemVirtualRangeDesc_t range{bytes, p};
        nvtxMemRegionsResizeBatch_t batch{};
        batch.extCompatID = NVTX_EXT_COMPATID_MEM;
        batch.structSize = sizeof batch;
        batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        batch.regionDescCount = 1;
        batch.regionDescElementSize = sizeof range;
        batch.regionDescElements = &range;
        nvtxMemRegionsResize(domain_, &batch);
    }

private:
    static constexpr std::size_t kAlign = 256;

    void* take(std::size_t bytes) {
        const std::size_t size = (bytes + kAlign - 1) / kAlign * kAlign;
        for (std::size_t i = 0; i < free_.size(); ++i) {
            if (free_[i].bytes < size) continue;
            Block used{free_[i].offset, size};
            free_[i].offset += size;
            free_[i].bytes -= size;
            if (free_[i].bytes == 0) free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
            used_.push_back(used);
            return static_cast<char*>(base_) + used.offset;
        }
        std::fprintf(stderr, "%s: the arena of %zu bytes is full; use a larger --arena-mib\n",
                     tbdsample::program_name(), bytes_);
        std::exit(1);
    }

    void give_back(const void* p) {
        const auto offset = static_cast<std::size_t>(static_cast<const char*>(p) - static_cast<char*>(base_));
        for (std::size_t i = 0; i < used_.size(); ++i) {
            if (used_[i].offset != offset) continue;
            Block block = used_[i];
            used_.erase(used_.begin() + static_cast<std::ptrdiff_t>(i));
            std::size_t at = 0;
            while (at < free_.size() && free_[at].offset < block.offset) ++at;
            free_.insert(free_.begin() + static_cast<std::ptrdiff_t>(at), block);
            // Coalesce with the neighbours.
            if (at + 1 < free_.size() && free_[at].offset + free_[at].bytes == free_[at + 1].offset) {
                free_[at].bytes += free_[at + 1].bytes;
                free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(at + 1));
            }
            if (at > 0 && free_[at - 1].offset + free_[at - 1].bytes == free_[at].offset) {
                free_[at - 1].bytes += free_[at].bytes;
                free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(at));
            }
            return;
        }
    }

    void register_region(void* p, std::size_t bytes) {
        nvtxMemVirtualRangeDesc_t range{bytes, p};
        nvtxMemRegionHandle_t handle = nullptr;
        nvtxMemRegionsRegisterBatch_t batch{};
        batch.extCompatID = NVTX_EXT_COMPATID_MEM;
        batch.structSize = sizeof batch;
        batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
        batch.heap = heap_;
        batch.regionCount = 1;
        batch.regionDescElementSize = sizeof range;
        batch.regionDescElements = &range;
        batch.regionHandleElementsOut = &handle;
        nvtxMemRegionsRegister(domain_, &batch);
        handles_.push_back({p, handle});
    }

    // By the handle registration gave back, when there is one (a tool is attached), else by pointer.
    void name_region(void* p, const std::string& name) {
        if (naming_ == Naming::none) return;
        nvtxMemRegionNameDesc_t desc{};
        desc.nameType = NVTX_MESSAGE_TYPE_ASCII;
        desc.name.ascii = name.c_str();
        desc.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
        desc.region.pointer = p;
        for (const auto& [pointer, handle] : handles_) {
            if (pointer != p || handle == nullptr) continue;
            desc.regionRefType = NVTX_MEM_REGION_REF_TYPE_HANDLE;
            desc.region.handle = handle;
        }
        handles_.clear();
        nvtxMemRegionsNameBatch_t batch{};
        batch.extCompatID = NVTX_EXT_COMPATID_MEM;
        batch.structSize = sizeof batch;
        batch.regionCount = 1;
        batch.regionElementSize = sizeof desc;
        batch.regionElements = &desc;
        nvtxMemRegionsName(domain_, &batch);
    }

    void* base_ = nullptr;
    std::size_t bytes_;
    Naming naming_;
    tbdsample::LabelWriter& labels_;
    std::vector<Block> free_, used_;                                // by offset (free_); in allocation order (used_)
    std::vector<std::pair<void*, nvtxMemRegionHandle_t>> handles_;  // the last registration's
    nvtxDomainHandle_t domain_ = nullptr;
    nvtxMemHeapHandle_t heap_ = nullptr;
};

// Row-major C[m, n] = op(A) op(B) + beta C; A is [m, k] ([k, m] when ta), B is [k, n] ([n, k] when tb).
void gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c,
          float beta = 0.0f) {
    const float one = 1.0f;
    CUBLAS_CHECK(cublasSgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b,
                             tb ? k : n, a, ta ? m : k, &beta, c, n));
}

struct Layer {
    int in = 0, out = 0;
    float *w = nullptr, *b = nullptr, *dw = nullptr, *db = nullptr, *vw = nullptr, *vb = nullptr;
};

class Trainer {
public:
    Trainer(const Options& o, Arena& arena, cudaStream_t stream, cublasHandle_t blas)
        : o_(o), arena_(arena), stream_(stream), blas_(blas) {
        std::vector<int> widths{o.input};
        for (int l = 0; l < o.layers; ++l) widths.push_back(o.hidden);
        widths.push_back(o.classes);
        for (std::size_t l = 0; l + 1 < widths.size(); ++l) layers_.push_back(make_layer(l, widths[l], widths[l + 1]));
        x_ = arena.allocate<float>(std::size_t(o.batch) * o.input, Category::input, "x");
        y_ = arena.allocate<int>(o.batch, Category::input, "y");
        loss_total_ = arena.allocate<float>(1, Category::other, "loss_total", false);
        host_x_.resize(std::size_t(o.batch) * o.input);
        host_y_.resize(o.batch);
    }
    ~Trainer() {
        arena_.release(loss_total_);
        arena_.release(y_);
        arena_.release(x_);
        for (auto it = layers_.rbegin(); it != layers_.rend(); ++it)
            for (float* p : {it->vb, it->vw, it->db, it->dw, it->b, it->w}) arena_.release(p);
    }
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    void step(int index, int rows) {
        if (rows != o_.batch) {
            arena_.resize(x_, std::size_t(rows) * o_.input * sizeof(float), Category::input);
            arena_.resize(y_, std::size_t(rows) * sizeof(int), Category::input);
        }
        for (std::size_t i = 0; i < std::size_t(rows) * o_.input; ++i) host_x_[i] = float((i * 7 + index) % 13) / 13;
        for (int r = 0; r < rows; ++r) host_y_[r] = (r + index) % o_.classes;
        CUDA_CHECK(cudaMemcpyAsync(x_, host_x_.data(), std::size_t(rows) * o_.input * sizeof(float),
                                   cudaMemcpyHostToDevice, stream_));
        CUDA_CHECK(
            cudaMemcpyAsync(y_, host_y_.data(), std::size_t(rows) * sizeof(int), cudaMemcpyHostToDevice, stream_));
        std::vector<float*> step_tensors;
        std::vector<const float*> inputs{x_};
        std::vector<float*> pre;
        forward(rows, inputs, pre, step_tensors);
        float* grad = loss(rows, pre.back(), step_tensors);
        backward(rows, inputs, pre, grad, step_tensors);
        for (const Layer& l : layers_) {
            update(l.w, l.dw, l.vw, std::size_t(l.in) * l.out);
            update(l.b, l.db, l.vb, std::size_t(l.out));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        for (auto it = step_tensors.rbegin(); it != step_tensors.rend(); ++it) arena_.release(*it);
    }

    // The last step's mean loss (the simulated GPU does not compute: there it reads what it reads).
    float last_loss() const {
        float loss = 0;
        CUDA_CHECK(cudaMemcpy(&loss, loss_total_, sizeof loss, cudaMemcpyDeviceToHost));
        return loss;
    }

private:
    // SGD with momentum: one fused kernel, or (--update blas) cuBLAS level-1 calls as some frameworks
    // do it: v = 0.9 v + g (scal, axpy), w = w - 0.01 v (axpy).
    void update(float* w, const float* g, float* v, std::size_t count) {
        if (o_.update == Update::kernel) {
            tbdsample::launch_sgd_momentum(w, g, v, count, 0.01f, 0.9f, stream_);
            return;
        }
        const float momentum = 0.9f, one = 1.0f, minus_rate = -0.01f;
        const int n = int(count);
        CUBLAS_CHECK(cublasSscal(blas_, n, &momentum, v, 1));
        CUBLAS_CHECK(cublasSaxpy(blas_, n, &one, g, 1, v, 1));
        CUBLAS_CHECK(cublasSaxpy(blas_, n, &minus_rate, v, 1, w, 1));
    }

    Layer make_layer(std::size_t index, int in, int out) {
        const std::string fc = "fc" + std::to_string(index);
        const std::size_t n = std::size_t(in) * out;
        Layer l{in, out};
        l.w = arena_.allocate<float>(n, Category::weights, fc + ".W");
        l.b = arena_.allocate<float>(out, Category::weights, fc + ".b");
        l.dw = arena_.allocate<float>(n, Category::gradients, fc + ".W");
        l.db = arena_.allocate<float>(out, Category::gradients, fc + ".b");
        l.vw = arena_.allocate<float>(n, Category::optimizer_state, fc + ".W.velocity");
        l.vb = arena_.allocate<float>(out, Category::optimizer_state, fc + ".b.velocity");
        tbdsample::launch_init_uniform(l.w, n, std::sqrt(6.0f / float(in)), 17 + index, stream_);
        tbdsample::launch_fill(l.b, out, 0.0f, stream_);
        tbdsample::launch_fill(l.vw, n, 0.0f, stream_);
        tbdsample::launch_fill(l.vb, out, 0.0f, stream_);
        return l;
    }

    void forward(int rows, std::vector<const float*>& inputs, std::vector<float*>& pre, std::vector<float*>& keep) {
        for (std::size_t i = 0; i < layers_.size(); ++i) {
            const Layer& l = layers_[i];
            const std::string fc = "fc" + std::to_string(i);
            float* z = arena_.allocate<float>(std::size_t(rows) * l.out, Category::activations, fc + ".z");
            keep.push_back(z);
            gemm(blas_, false, true, rows, l.out, l.in, inputs[i], l.w, z);
            tbdsample::launch_add_bias(z, l.b, rows, l.out, stream_);
            pre.push_back(z);
            if (i + 1 == layers_.size()) break;
            float* a = arena_.allocate<float>(std::size_t(rows) * l.out, Category::activations, fc + ".relu");
            keep.push_back(a);
            tbdsample::launch_relu_forward(z, a, std::size_t(rows) * l.out, stream_);
            inputs.push_back(a);
        }
    }

    // Softmax/cross-entropy: the logits' gradient (kept for backward) and the per-sample losses, a
    // temporary of this one operation (workspace, named without a category on purpose).
    float* loss(int rows, const float* logits, std::vector<float*>& keep) {
        float* grad = arena_.allocate<float>(std::size_t(rows) * o_.classes, Category::activations, "logits.grad");
        keep.push_back(grad);
        float* row_loss = arena_.allocate<float>(rows, Category::workspace, "row_loss", false);
        CUDA_CHECK(cudaMemsetAsync(loss_total_, 0, sizeof(float), stream_));
        tbdsample::launch_softmax_cross_entropy(logits, y_, row_loss, grad, rows, o_.classes, 1.0f / float(rows),
                                                stream_);
        tbdsample::launch_sum_into(row_loss, rows, 1.0f / float(rows), loss_total_, stream_);
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        arena_.release(row_loss);
        return grad;
    }

    // Activation gradients are named without a category on purpose: the ordinary rules tag them.
    void backward(int rows, const std::vector<const float*>& inputs, const std::vector<float*>& pre, float* grad,
                  std::vector<float*>& keep) {
        for (std::size_t i = layers_.size(); i-- > 0;) {
            const Layer& l = layers_[i];
            gemm(blas_, true, false, l.out, l.in, rows, grad, inputs[i], l.dw);
            tbdsample::launch_bias_grad(grad, l.db, rows, l.out, 0.0f, stream_);
            if (i == 0) break;
            const std::size_t count = std::size_t(rows) * l.in;
            const std::string fc = "fc" + std::to_string(i);
            float* dact = arena_.allocate<float>(count, Category::activations, "dact." + fc, false);
            keep.push_back(dact);
            gemm(blas_, false, false, rows, l.in, l.out, grad, l.w, dact);
            float* dpre = arena_.allocate<float>(count, Category::activations, "dpre." + fc, false);
            keep.push_back(dpre);
            tbdsample::launch_relu_backward(dact, pre[i - 1], dpre, count, stream_);
            grad = dpre;
        }
    }

    const Options& o_;
    Arena& arena_;
    cudaStream_t stream_;
    cublasHandle_t blas_;
    std::vector<Layer> layers_;
    float* x_ = nullptr;
    int* y_ = nullptr;
    float* loss_total_ = nullptr;
    std::vector<float> host_x_;
    std::vector<int> host_y_;
};

Options parse(int argc, char** argv) {
    Options o;
    tbdsample::OptionParser parser("nvtx_pool_train",
                                   "Trains an MLP out of one arena that registers its tensors as NVTX memory regions.");
    parser.add_int("iterations", &o.iterations, 1, 100000, "training steps");
    parser.add_int("batch", &o.batch, 1, 65536, "rows per step");
    parser.add_int("input", &o.input, 1, 65536, "input features");
    parser.add_int("hidden", &o.hidden, 1, 65536, "hidden width");
    parser.add_int("layers", &o.layers, 1, 64, "hidden layers");
    parser.add_int("classes", &o.classes, 2, 65536, "classes");
    parser.add_int("last-batch", &o.last_batch, 0, 65536,
                   "rows of the last step (0: --batch); resizes the input regions");
    parser.add_long("arena-mib", &o.arena_mib, 1, 65536, "arena size in MiB");
    parser.add_choice(
        "names", {"category", "plain", "none"}, 0, [&](int i) { o.names = Naming(i); },
        "region names: CATEGORY:NAME for most tensors, NAME only, or no names");
    parser.add_choice(
        "update", {"kernel", "blas"}, 0, [&](int i) { o.update = Update(i); },
        "SGD with momentum as one fused kernel, or as cuBLAS scal/axpy calls");
    parser.parse(argc, argv);
    if (o.last_batch > o.batch) parser.usage_error("--last-batch must not exceed --batch");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    tbdsample::LabelWriter labels;
    labels.enable_timestamps();
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    cublasHandle_t blas;
    CUBLAS_CHECK(cublasCreate(&blas));
    CUBLAS_CHECK(cublasSetStream(blas, stream));
    const long long started = tbdsample::monotonic_ns();
    float final_loss = 0;
    {
        Arena arena(std::size_t(o.arena_mib) << 20, o.names, labels);
        Trainer trainer(o, arena, stream, blas);
        for (int i = 0; i < o.iterations; ++i) {
            const long long begin = tbdsample::monotonic_ns();
            nvtxRangePushA("train_step");
            trainer.step(i, i + 1 == o.iterations && o.last_batch > 0 ? o.last_batch : o.batch);
            nvtxRangePop();
            labels.record_span("training", i, begin, tbdsample::monotonic_ns());
        }
        final_loss = trainer.last_loss();
    }
    CUBLAS_CHECK(cublasDestroy(blas));
    CUDA_CHECK(cudaStreamDestroy(stream));
    std::printf("nvtx_pool_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f arena_mib=%ld\n", o.iterations,
                double(final_loss), double(tbdsample::monotonic_ns() - started) / 1e6, o.arena_mib);
    return 0;
}
