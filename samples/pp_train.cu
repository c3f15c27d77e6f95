// pp_train: pipeline-parallel training of a stack of linear layers on N ranks, one stage of --layers
// layers per rank (one process per rank, started by the program itself as torchrun would, or by any
// launcher that sets RANK, LOCAL_RANK, WORLD_SIZE and TBD_NCCL_UNIQUE_ID). The batch is cut into
// --micro-batches; each stage runs every micro-batch's forward, then every backward (GPipe's
// schedule), and the stages hand each other activations and their gradients with ncclSend/ncclRecv:
// stage s receives its input from stage s - 1 and sends its output to stage s + 1 in forward; in
// backward it receives the gradient of its output from stage s + 1 and sends the gradient of its input
// to stage s - 1.
//
//   --grouped   the transfers of one direction for all micro-batches go in one
//               ncclGroupStart/ncclGroupEnd (NCCL runs a group as one kernel): a stage posts all its
//               forward sends at once, the next stage all its receives (as pipeline schedules batch
//               their point-to-point calls so that no pair of ranks waits on the other).
//   --persistent-buffers  the buffers a stage receives into (its input, its output's gradient) are
//               allocated once per micro-batch and refilled every step (preallocated communication
//               buffers), not allocated in each step.
//
// Memory (labels as the other samples write them): weights, weight gradients (accumulated over the
// micro-batches, read by the update) and momentum live for the run; each step's batch (first stage,
// copied from the host: input), the activations of every micro-batch, the ones received from the
// previous stage, the gradients flowing back between layers and between stages (activations: data
// between operations, definitions.md) are allocated in the step and freed at its end (the received
// ones kept for the run with --persistent-buffers: still activations, refilled in every step).
#include "common/check.h"
#include "common/kernels.h"
#include "common/labels.h"
#include "common/options.h"
#include "common/rank_memory.h"
#include "common/ranks.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

using tbdsample::Category;

struct Options {
    int ranks = 2, layers = 4, hidden = 256, batch = 64, iterations = 4, micro_batches = 2;
    bool grouped = false, persistent_buffers = false;
};

using Memory = tbdsample::LabelledMemory;

// One micro-batch's buffers in a step: acts[0] is the stage's input (the batch's slice on the first
// stage, received from the previous stage otherwise), acts[l + 1] the output of layer l; grad_out the
// gradient of the stage's output (received from the next stage; on the last stage, the stand-in for
// d(loss)/d(output) is its own output).
struct MicroBatch {
    std::vector<float*> acts;
    float* grad_out = nullptr;
};

class Stage {
public:
    Stage(const Options& o, const tbdsample::RankInfo& r, ncclComm_t comm) : o_(o), rank_(r), comm_(comm) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CUBLAS_CHECK(cublasCreate(&blas_));
        CUBLAS_CHECK(cublasSetStream(blas_, stream_));
        layer_size_ = std::size_t(o.hidden) * o.hidden;
        rows_ = o.batch / o.micro_batches;
        const std::size_t total = layer_size_ * o.layers;
        weights_ = memory_.allocate(total, Category::weights);
        tbdsample::launch_init_uniform(weights_, total, 0.05f, 7 + std::uint64_t(r.rank), stream_);
        grads_ = memory_.allocate(total, Category::gradients);
        velocity_ = memory_.allocate(total, Category::optimizer_state);
        tbdsample::launch_fill(velocity_, total, 0.0f, stream_);
        host_batch_.assign(std::size_t(o.batch) * o.hidden, 0.01f * float(r.rank + 1));
    }

    void step(int index) {
        const long long begin = tbdsample::monotonic_ns();
        std::vector<MicroBatch> micro(std::size_t(o_.micro_batches));
        for (std::size_t m = 0; m < micro.size(); ++m) allocate(micro[m], m);
        if (first()) load_batch(micro);
        transfer(micro, /*forward=*/true, /*send=*/false);
        for (MicroBatch& mb : micro)
            for (int l = 0; l < o_.layers; ++l) gemm(false, mb.acts[l], layer(l), mb.acts[l + 1]);
        transfer(micro, true, true);
        transfer(micro, false, false);
        for (int m = o_.micro_batches - 1; m >= 0; --m) backward(micro[std::size_t(m)], m != o_.micro_batches - 1);
        transfer(micro, false, true);
        for (int l = 0; l < o_.layers; ++l)
            tbdsample::launch_sgd_momentum(layer(l), grads_ + layer_size_ * std::size_t(l),
                                           velocity_ + layer_size_ * std::size_t(l), layer_size_, 0.01f, 0.9f,
                                           stream_);
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        for (MicroBatch& mb : micro) release(mb);
        memory_.labels().record_span("training", index, begin, tbdsample::monotonic_ns());
    }

    ~Stage() {
        for (float* p : kept_) memory_.release(p);
        memory_.release(velocity_);
        memory_.release(grads_);
        memory_.release(weights_);
        cublasDestroy(blas_);
    }

private:
    bool first() const { return rank_.rank == 0; }
    bool last() const { return rank_.rank == rank_.world_size - 1; }
    float* layer(int l) const { return weights_ + layer_size_ * std::size_t(l); }
    std::size_t slice() const { return std::size_t(rows_) * o_.hidden; }

    // Micro-batch m's buffers; with --persistent-buffers the received ones are micro-batch m's kept
    // buffers (made in the first step).
    void allocate(MicroBatch& mb, std::size_t m) {
        auto received = [&](std::size_t which) {
            if (!o_.persistent_buffers) return memory_.allocate(slice(), Category::activations);
            if (kept_.size() <= 2 * m + which) kept_.resize(2 * m + which + 1, nullptr);
            float*& p = kept_[2 * m + which];
            if (!p) p = memory_.allocate(slice(), Category::activations);
            return p;
        };
        for (int l = 0; l <= o_.layers; ++l)
            mb.acts.push_back(first() && l == 0 ? memory_.allocate(slice(), Category::input)
                              : l == 0      ? received(0)
                                            : memory_.allocate(slice(), Category::activations));
        mb.grad_out = last() ? mb.acts.back() : received(1);
    }
    void release(MicroBatch& mb) {
        auto kept = [&](float* p) { return std::find(kept_.begin(), kept_.end(), p) != kept_.end(); };
        if (mb.grad_out != mb.acts.back() && !kept(mb.grad_out)) memory_.release(mb.grad_out);
        for (float* a : mb.acts)
            if (!kept(a)) memory_.release(a);
    }

    void load_batch(std::vector<MicroBatch>& micro) {
        for (std::size_t m = 0; m < micro.size(); ++m)
            CUDA_CHECK(cudaMemcpyAsync(micro[m].acts[0], host_batch_.data() + m * slice(), slice() * sizeof(float),
                                       cudaMemcpyHostToDevice, stream_));
    }

    // The point-to-point transfers of one direction: forward moves each micro-batch's output to the
    // next stage's input, backward the gradient of each micro-batch's input to the previous stage's
    // output gradient. `send`: this stage's sending side, else its receiving side.
    void transfer(std::vector<MicroBatch>& micro, bool forward, bool send) {
        const int peer = rank_.rank + ((forward == send) ? 1 : -1);
        if (peer < 0 || peer >= rank_.world_size) return;
        if (o_.grouped) NCCL_CHECK(ncclGroupStart());
        for (MicroBatch& mb : micro) {
            // Backward sends the gradient of the stage's input, written in place of its activation.
            float* sent = forward ? mb.acts.back() : mb.acts[0];
            float* received = forward ? mb.acts[0] : mb.grad_out;
            if (send)
                NCCL_CHECK(ncclSend(sent, slice(), ncclFloat32, peer, comm_, stream_));
            else
                NCCL_CHECK(ncclRecv(received, slice(), ncclFloat32, peer, comm_, stream_));
        }
        if (o_.grouped) NCCL_CHECK(ncclGroupEnd());
    }

    // One micro-batch's backward: weight gradients accumulated over the micro-batches (the first one
    // backward reaches in a step overwrites them, the others add to them: GEMM beta 1), the gradient
    // of each layer's input written in place of its activation, down to the stage's input (sent to the
    // previous stage; the first stage has none to compute).
    void backward(MicroBatch& mb, bool accumulate) {
        float* grad = mb.grad_out;
        for (int l = o_.layers - 1; l >= 0; --l) {
            gemm_weight_grad(mb.acts[l], grad, grads_ + layer_size_ * std::size_t(l), accumulate);
            if (l > 0 || !first()) gemm(true, grad, layer(l), mb.acts[l]);
            grad = mb.acts[l];
        }
    }

    void gemm(bool transpose_b, const float* a, const float* b, float* c) {
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_CHECK(cublasSgemm(blas_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, o_.hidden, rows_,
                                 o_.hidden, &one, b, o_.hidden, a, o_.hidden, &zero, c, o_.hidden));
    }
    void gemm_weight_grad(const float* input, const float* grad_out, float* grad_w, bool accumulate) {
        const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
        CUBLAS_CHECK(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, o_.hidden, o_.hidden, rows_, &one, grad_out,
                                 o_.hidden, input, o_.hidden, &beta, grad_w, o_.hidden));
    }

    Options o_;
    tbdsample::RankInfo rank_;
    ncclComm_t comm_;
    Memory memory_;
    cudaStream_t stream_{};
    cublasHandle_t blas_{};
    std::size_t layer_size_ = 0;
    int rows_ = 0;
    float* weights_ = nullptr;
    float* grads_ = nullptr;
    float* velocity_ = nullptr;
    std::vector<float> host_batch_;
    std::vector<float*> kept_;  // --persistent-buffers: per micro-batch, its received input and output gradient
};

Options parse(int argc, char** argv) {
    Options o;
    tbdsample::OptionParser parser("pp_train", "Pipeline-parallel training on N ranks with NCCL send/receive.");
    parser.add_int("ranks", &o.ranks, 2, 64, "ranks (stages) to start when not started by a launcher");
    parser.add_int("layers", &o.layers, 1, 256, "linear layers per stage");
    parser.add_int("hidden", &o.hidden, 8, 8192, "width of every layer");
    parser.add_int("batch", &o.batch, 1, 65536, "samples per step");
    parser.add_int("micro-batches", &o.micro_batches, 1, 256, "micro-batches per step (dividing --batch)");
    parser.add_int("iterations", &o.iterations, 1, 100000, "training steps");
    parser.add_flag("grouped", &o.grouped, "each direction's sends (or receives) of a step in one NCCL group");
    parser.add_flag("persistent-buffers", &o.persistent_buffers,
                    "receive into buffers kept for the run instead of ones allocated in each step");
    parser.parse(argc, argv);
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse(argc, argv);
    if (options.batch % options.micro_batches != 0) {
        std::fprintf(stderr, "pp_train: error: --micro-batches must divide --batch\n");
        return 2;
    }
    const std::optional<tbdsample::RankInfo> rank = tbdsample::rank_from_environment();
    if (!rank) return tbdsample::launch_ranks(options.ranks, argv);
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    CUDA_CHECK(cudaSetDevice(rank->local_rank % devices));
    ncclComm_t comm = nullptr;
    NCCL_CHECK(ncclCommInitRank(&comm, rank->world_size, tbdsample::unique_id_from_environment(), rank->rank));
    {
        Stage stage(options, *rank, comm);
        for (int i = 0; i < options.iterations; ++i) stage.step(i);
    }
    NCCL_CHECK(ncclCommDestroy(comm));
    std::printf("pp_train: rank %d of %d done\n", rank->rank, rank->world_size);
    return 0;
}
