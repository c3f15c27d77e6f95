// dp_train: data-parallel training of a stack of linear layers on N ranks (one process per rank,
// started by the program itself as torchrun would, or by any launcher that sets RANK, LOCAL_RANK,
// WORLD_SIZE and TBD_NCCL_UNIQUE_ID), gradients averaged with NCCL.
//
//   --overlap buckets  (DDP) gradients live in buckets of consecutive layers; as soon as backward has
//                      written a bucket, it is all-reduced on a communication stream while backward
//                      goes on with the earlier layers.
//   --overlap none     one all-reduce of all gradients (one bucket) after backward, on the compute
//                      stream.
//   --zero             (ZeRO/FSDP-like) each bucket is reduce-scattered: rank r keeps shard r of the
//                      summed gradients, updates its shard of the weights (optimizer state only for
//                      the shard) and the weights are all-gathered back.
//   --zero-stage S     what --zero shards (implies --zero; 1 when only --zero is given):
//                      1  the optimizer state; every gradient bucket is kept for the run, besides the
//                         rank's shard of it;
//                      2  the gradients too: a bucket's full gradient buffer is allocated when backward
//                         reaches it and freed once it is reduce-scattered (the rank keeps its shard);
//                      3  the weights too: the rank keeps its shard of each layer, all-gathers the
//                         layer's full weights into a buffer before its use in forward and in backward
//                         and frees it after; gradients as stage 2, reduce-scattered layer by layer so
//                         that the rank's gradient shard matches its weight shard.
//                      A buffer is freed only after the work using it is done (the stream is
//                      synchronised first, as a program freeing with cudaFree must).
//   --slow-rank K      rank K does --slow-us of host work before each step (a slow data loader), so
//                      the other ranks' collectives wait for it.
//   --grouped          each collective is issued inside ncclGroupStart/ncclGroupEnd (a group of one, as
//                      frameworks that coalesce collectives issue them): its kernel is the group's.
//   --subgroup-ranks N ranks 0..N-1 also form a communicator of their own (ncclCommSplit of the world
//                      one; the other ranks take no part) and all-reduce a small metrics buffer on it
//                      after each step's update, as a subgroup keeps its own statistics: a rank then
//                      runs collectives on two communicators, and not every rank runs the same ones.
//   --subgroups G      instead, the ranks form G subgroups of consecutive ranks (ranks/G each, one
//                      ncclCommSplit by color), every one all-reducing the same metrics buffer: groups
//                      of one size issuing the same calls (the data-parallel groups of a 2-D layout).
//
// Memory (labels as the other samples write them): weights and optimizer state live for the run;
// the gradient buckets (gradients: backward writes them, the optimizer reads them, NCCL reduces them in
// place) and, with --zero, the gradient shards too; the input and activations of a step are freed at
// its end. With --zero-stage 2 or 3 the full gradient buffers are gradients made and freed in each
// step, and with 3 the weights kept are the rank's shards and the gathered layers are weights made and
// freed around each use.
#include "common/check.h"
#include "common/kernels.h"
#include "common/labels.h"
#include "common/options.h"
#include "common/rank_memory.h"
#include "common/ranks.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

using tbdsample::Category;

struct Options {
    int ranks = 2, layers = 8, hidden = 256, batch = 64, iterations = 4, buckets = 4, slow_rank = -1;
    int subgroup_ranks = 0;  // 0: no subgroup communicator
    int subgroups = 0;       // 0: none; else every rank is in one of this many subgroups
    long slow_us = 20000;
    bool overlap = true, zero = false, grouped = false;
    bool momentum = true;  // false: plain SGD, no optimizer state (what mixed precision adds a master copy to)
    int zero_stage = 0;  // 0: no sharding; 1-3 as --zero-stage
};

using Memory = tbdsample::LabelledMemory;

struct Bucket {
    int first_layer = 0, end_layer = 0;  // layers [first, end) in one contiguous gradient buffer
    std::size_t offset = 0, count = 0;   // in floats, within the flat weights
    float* grads = nullptr;              // stage 2 and 3: only from backward reaching it to its reduction
    float* shard = nullptr;              // --zero: this rank's part of the summed gradients
    cudaEvent_t ready{};
};

class Trainer {
public:
    Trainer(const Options& o, const tbdsample::RankInfo& r, ncclComm_t comm, ncclComm_t subgroup)
        : o_(o), rank_(r), comm_(comm), subgroup_(subgroup) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
        CUDA_CHECK(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming));
        CUBLAS_CHECK(cublasCreate(&blas_));
        CUBLAS_CHECK(cublasSetStream(blas_, compute_));
        layer_size_ = std::size_t(o.hidden) * o.hidden;
        const std::size_t total = layer_size_ * o.layers;
        // Stage 3 keeps shard r of every layer, one layer's after the other; each rank seeds its own
        // shard (no rank holds the whole weights, so none has a copy to keep equal to the others').
        const std::size_t kept = o.zero_stage >= 3 ? total / rank_.world_size : total;
        weights_ = memory_.allocate(kept, Category::weights);
        tbdsample::launch_init_uniform(weights_, kept, 0.05f, 7 + std::uint64_t(kept == total ? 0 : rank_.rank),
                                       compute_);
        make_buckets();
        std::size_t state = o.zero ? total / rank_.world_size : total;
        if (o.momentum) {
            velocity_ = memory_.allocate(state, Category::optimizer_state);
            tbdsample::launch_fill(velocity_, state, 0.0f, compute_);
        }
        if (subgroup_) {
            metrics_ = memory_.allocate(kMetrics, Category::other);
            tbdsample::launch_fill(metrics_, kMetrics, 1.0f, compute_);
        }
    }

    void step(int index) {
        const long long begin = tbdsample::monotonic_ns();
        if (rank_.rank == o_.slow_rank) busy_wait_us(o_.slow_us);  // host work: a slow data loader
        std::vector<float*> acts;
        for (int l = 0; l <= o_.layers; ++l)
            acts.push_back(
                memory_.allocate(std::size_t(o_.batch) * o_.hidden, l == 0 ? Category::input : Category::activations));
        tbdsample::launch_fill(acts[0], std::size_t(o_.batch) * o_.hidden, 0.01f * float(rank_.rank + 1), compute_);
        for (int l = 0; l < o_.layers; ++l) {
            float* w = use_layer(l);
            gemm(false, acts[l], w, acts[l + 1]);
            done_with_layer(w);
        }
        backward(acts);
        update();
        if (subgroup_)  // the subgroup's statistics of the step
            collective([&] { NCCL_CHECK(ncclAllReduce(metrics_, metrics_, kMetrics, ncclFloat32, ncclSum, subgroup_, compute_)); });
        for (float* a : acts) memory_.release(a);
        CUDA_CHECK(cudaStreamSynchronize(compute_));
        memory_.labels().record_span("training", index, begin, tbdsample::monotonic_ns());
    }

    ~Trainer() {
        for (Bucket& b : buckets_) {
            if (b.grads) memory_.release(b.grads);
            if (b.shard) memory_.release(b.shard);
            cudaEventDestroy(b.ready);
        }
        if (metrics_) memory_.release(metrics_);
        if (velocity_) memory_.release(velocity_);
        memory_.release(weights_);
        cublasDestroy(blas_);
    }

private:
    float* layer(int l) const { return weights_ + layer_size_ * std::size_t(l); }
    std::size_t layer_shard() const { return layer_size_ / rank_.world_size; }

    // The full weights of layer l for one use: stage 3 all-gathers them from every rank's shard into a
    // buffer of their own (weights made for this use); the other stages keep them whole.
    float* use_layer(int l) {
        if (o_.zero_stage < 3) return layer(l);
        float* full = memory_.allocate(layer_size_, Category::weights);
        collective([&] {
            NCCL_CHECK(ncclAllGather(weights_ + layer_shard() * std::size_t(l), full, layer_shard(), ncclFloat32,
                                     comm_, compute_));
        });
        return full;
    }
    void done_with_layer(float* w) {
        if (o_.zero_stage < 3) return;
        CUDA_CHECK(cudaStreamSynchronize(compute_));  // the work reading it is done
        memory_.release(w);
    }

    void make_buckets() {
        // Backward reaches the last layers first: bucket 0 holds the last layers.
        const int per = (o_.layers + o_.buckets - 1) / o_.buckets;
        for (int end = o_.layers; end > 0; end -= per) {
            Bucket b;
            b.end_layer = end;
            b.first_layer = end - per > 0 ? end - per : 0;
            b.offset = layer_size_ * std::size_t(b.first_layer);
            b.count = layer_size_ * std::size_t(b.end_layer - b.first_layer);
            if (o_.zero_stage < 2) b.grads = memory_.allocate(b.count, Category::gradients);
            if (o_.zero) b.shard = memory_.allocate(b.count / rank_.world_size, Category::gradients);
            CUDA_CHECK(cudaEventCreateWithFlags(&b.ready, cudaEventDisableTiming));
            buckets_.push_back(b);
        }
    }

    Bucket& bucket_of(int l) {
        for (Bucket& b : buckets_)
            if (l >= b.first_layer && l < b.end_layer) return b;
        return buckets_.front();  // not reached: the buckets cover every layer
    }
    // Stage 2 and 3: the full gradient buffer of layer l's bucket, allocated when backward reaches it.
    float* grad_of(int l) {
        Bucket& b = bucket_of(l);
        if (!b.grads) b.grads = memory_.allocate(b.count, Category::gradients);
        return b.grads + layer_size_ * std::size_t(l - b.first_layer);
    }

    void backward(const std::vector<float*>& acts) {
        float* grad = acts[o_.layers];  // stands in for d(loss)/d(output)
        for (int l = o_.layers - 1; l >= 0; --l) {
            gemm_weight_grad(acts[l], grad, grad_of(l));
            for (Bucket& b : buckets_)
                if (b.first_layer == l && o_.overlap) reduce_bucket(b, comm_stream_);
            if (l > 0) {  // d(input of layer l), in place of its activation
                float* w = use_layer(l);
                gemm(true, grad, w, acts[l]);
                done_with_layer(w);
            }
            grad = acts[l];
        }
        if (!o_.overlap) reduce_bucket(buckets_.front(), compute_);  // one bucket: all gradients
        CUDA_CHECK(cudaEventRecord(comm_done_, comm_stream_));
        CUDA_CHECK(cudaStreamWaitEvent(compute_, comm_done_, 0));
    }

    // One NCCL call; with --grouped inside ncclGroupStart/ncclGroupEnd (a group of one).
    template <typename Call>
    void collective(Call call) {
        if (o_.grouped) NCCL_CHECK(ncclGroupStart());
        call();
        if (o_.grouped) NCCL_CHECK(ncclGroupEnd());
    }

    void reduce_bucket(Bucket& b, cudaStream_t stream) {
        if (stream != compute_) {
            CUDA_CHECK(cudaEventRecord(b.ready, compute_));
            CUDA_CHECK(cudaStreamWaitEvent(stream, b.ready, 0));
        }
        if (!o_.zero) {
            collective([&] { NCCL_CHECK(ncclAllReduce(b.grads, b.grads, b.count, ncclFloat32, ncclAvg, comm_, stream)); });
            return;
        }
        if (o_.zero_stage < 3) {
            collective([&] {
                NCCL_CHECK(ncclReduceScatter(b.grads, b.shard, b.count / rank_.world_size, ncclFloat32, ncclAvg, comm_,
                                             stream));
            });
        } else {
            // Layer by layer: shard r of each layer, laid out as the weight shards are.
            for (int l = b.first_layer; l < b.end_layer; ++l) {
                const std::size_t within = std::size_t(l - b.first_layer);
                collective([&] {
                    NCCL_CHECK(ncclReduceScatter(b.grads + layer_size_ * within, b.shard + layer_shard() * within,
                                                 layer_shard(), ncclFloat32, ncclAvg, comm_, stream));
                });
            }
        }
        if (o_.zero_stage < 2) return;
        CUDA_CHECK(cudaStreamSynchronize(stream));  // the reduction has read the buffer
        memory_.release(b.grads);
        b.grads = nullptr;
    }

    // Weights -= lr * (the velocity at `state_offset` of the optimizer state, or the gradient itself
    // without momentum).
    void apply(float* weights, const float* grad, std::size_t state_offset, std::size_t count) {
        const float lr = 0.01f, momentum = 0.9f;
        if (velocity_)
            tbdsample::launch_sgd_momentum(weights, grad, velocity_ + state_offset, count, lr, momentum, compute_);
        else
            tbdsample::launch_sgd(weights, grad, count, lr, compute_);
    }

    void update() {
        if (!o_.zero) {
            for (int l = 0; l < o_.layers; ++l)
                apply(layer(l), grad_of(l), layer_size_ * std::size_t(l), layer_size_);
            return;
        }
        if (o_.zero_stage >= 3) {
            // The weight shards, the gradient shards and the state are laid out alike (layer after layer).
            for (const Bucket& b : buckets_) {
                const std::size_t first = layer_shard() * std::size_t(b.first_layer);
                apply(weights_ + first, b.shard, first, b.count / rank_.world_size);
            }
            return;
        }
        std::size_t state_offset = 0;
        for (Bucket& b : buckets_) {
            const std::size_t shard = b.count / rank_.world_size;
            float* mine = weights_ + b.offset + shard * std::size_t(rank_.rank);
            apply(mine, b.shard, state_offset, shard);
            state_offset += shard;
            collective([&] { NCCL_CHECK(ncclAllGather(mine, weights_ + b.offset, shard, ncclFloat32, comm_, compute_)); });
        }
    }

    void gemm(bool transpose_b, const float* a, const float* b, float* c) {
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_CHECK(cublasSgemm(blas_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, o_.hidden, o_.batch,
                                 o_.hidden, &one, b, o_.hidden, a, o_.hidden, &zero, c, o_.hidden));
    }
    void gemm_weight_grad(const float* input, const float* grad_out, float* grad_w) {
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_CHECK(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, o_.hidden, o_.hidden, o_.batch, &one, grad_out,
                                 o_.hidden, input, o_.hidden, &zero, grad_w, o_.hidden));
    }
    static void busy_wait_us(long us) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
        while (std::chrono::steady_clock::now() < until) {
        }
    }

    static constexpr std::size_t kMetrics = 64;  // floats in the subgroup's metrics buffer

    Options o_;
    tbdsample::RankInfo rank_;
    ncclComm_t comm_;
    ncclComm_t subgroup_;  // --subgroup-ranks or --subgroups: the subgroup's communicator; null for ranks in none
    float* metrics_ = nullptr;
    Memory memory_;
    cudaStream_t compute_{}, comm_stream_{};
    cudaEvent_t comm_done_{};
    cublasHandle_t blas_{};
    std::size_t layer_size_ = 0;
    float* weights_ = nullptr;
    float* velocity_ = nullptr;
    std::vector<Bucket> buckets_;
};

Options parse(int argc, char** argv) {
    Options o;
    tbdsample::OptionParser parser("dp_train", "Data-parallel training on N ranks with NCCL (DDP buckets or ZeRO).");
    parser.add_int("ranks", &o.ranks, 1, 64, "ranks (processes) to start when not started by a launcher");
    parser.add_int("layers", &o.layers, 1, 256, "linear layers");
    parser.add_int("hidden", &o.hidden, 8, 8192, "width of every layer");
    parser.add_int("batch", &o.batch, 1, 65536, "samples per rank and step");
    parser.add_int("iterations", &o.iterations, 1, 100000, "training steps");
    parser.add_int("buckets", &o.buckets, 1, 256, "gradient buckets");
    parser.add_int("slow-rank", &o.slow_rank, -1, 63, "rank doing extra host work each step (-1: none)");
    parser.add_long("slow-us", &o.slow_us, 0, 10000000, "host work of the slow rank per step, microseconds");
    parser.add_choice(
        "overlap", {"buckets", "none"}, 0, [&](int i) { o.overlap = i == 0; },
        "all-reduce each bucket when ready (buckets) or all after backward (none)");
    parser.add_flag("zero", &o.zero, "reduce-scatter gradients and all-gather weights (ZeRO/FSDP-like)");
    parser.add_choice(
        "optimizer", {"momentum", "sgd"}, 0, [&](int i) { o.momentum = i == 0; },
        "SGD with momentum (a velocity per parameter: optimizer state) or plain SGD (no state)");
    parser.add_flag("grouped", &o.grouped, "issue each collective inside ncclGroupStart/ncclGroupEnd");
    parser.add_int("subgroup-ranks", &o.subgroup_ranks, 0, 64,
                   "ranks 0..N-1 also all-reduce a metrics buffer on a communicator of their own (0: none)");
    parser.add_int("subgroups", &o.subgroups, 0, 64,
                   "the ranks form this many subgroups of consecutive ranks, each all-reducing a metrics buffer");
    parser.add_int("zero-stage", &o.zero_stage, 1, 3,
                   "what --zero shards: 1 optimizer state (--zero alone), 2 also gradients, 3 also weights; implies --zero");
    parser.parse(argc, argv);
    if (o.zero && o.zero_stage == 0) o.zero_stage = 1;
    o.zero = o.zero_stage > 0;
    if (o.buckets > o.layers) o.buckets = o.layers;
    if (!o.overlap) o.buckets = 1;  // one all-reduce of all gradients after backward
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse(argc, argv);
    const std::optional<tbdsample::RankInfo> rank = tbdsample::rank_from_environment();
    if (!rank) return tbdsample::launch_ranks(options.ranks, argv);
    if ((std::size_t(options.hidden) * options.hidden) % std::size_t(rank->world_size) != 0) {
        std::fprintf(stderr, "dp_train: error: --hidden squared must be a multiple of the world size\n");
        return 2;
    }
    if (options.subgroups > 0 && (options.subgroup_ranks > 0 || rank->world_size % options.subgroups != 0)) {
        std::fprintf(stderr, "dp_train: error: --subgroups must divide the world size and excludes --subgroup-ranks\n");
        return 2;
    }
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    CUDA_CHECK(cudaSetDevice(rank->local_rank % devices));
    ncclComm_t comm = nullptr;
    NCCL_CHECK(ncclCommInitRank(&comm, rank->world_size, tbdsample::unique_id_from_environment(), rank->rank));
    ncclComm_t subgroup = nullptr;
    if (options.subgroup_ranks > 0) {  // every rank takes part in the split; the others get no communicator
        const bool member = rank->rank < options.subgroup_ranks;
        NCCL_CHECK(ncclCommSplit(comm, member ? 0 : NCCL_SPLIT_NOCOLOR, rank->rank, &subgroup, nullptr));
    } else if (options.subgroups > 0) {  // color: the subgroup of consecutive ranks this one is in
        const int color = rank->rank / (rank->world_size / options.subgroups);
        NCCL_CHECK(ncclCommSplit(comm, color, rank->rank, &subgroup, nullptr));
    }
    {
        Trainer trainer(options, *rank, comm, subgroup);
        for (int i = 0; i < options.iterations; ++i) trainer.step(i);
    }
    if (subgroup) NCCL_CHECK(ncclCommDestroy(subgroup));
    NCCL_CHECK(ncclCommDestroy(comm));
    std::printf("dp_train: rank %d of %d done\n", rank->rank, rank->world_size);
    return 0;
}
