// Iterations on made-up runs: NVTX step names, --iteration-range patterns, and by repetition:
// boundaries where the batch arrives, spans that never overlap, outliers set apart.
#include <doctest/doctest.h>

#include "iterations.h"
#include "tbdprof/step_names.h"
#include "timed_work.h"

#include <algorithm>

using namespace tbdprof::tagger;
using namespace tbdprof::steps;

TEST_CASE("numbered step names are steps; names that merely contain 'step' are not") {
    for (const char* name : {"ProfilerStep#5", "Train step 3", "step 12", "iteration 7", "train_step_4", "Iteration_0",
                             "step", "train_step"})
        CHECK_MESSAGE(looks_like_step(name), name);
    for (const char* name : {"Optimizer.step#SGD.step", "forward", "stepper 3", "layer 2", "## backward ##"})
        CHECK_MESSAGE(!looks_like_step(name), name);
    CHECK_EQ(step_family("Train step 3"), "train step");
    CHECK(matches_iteration_range("Train step 3", "Train step"));
    CHECK(matches_iteration_range("epoch 1 batch 7", "epoch * batch *"));
    CHECK(matches_iteration_range("step_7", "step_?"));
    CHECK_FALSE(matches_iteration_range("val step 3", "Train step"));
    CHECK_FALSE(matches_iteration_range("step_17", "step_?"));
}

namespace {

struct Clock {
    TraceModel model;
    int64_t now = 1000;
    void add(WorkItem::Kind kind, int32_t function) {
        WorkItem w = test::timed_work(kind, function, now);
        model.work.push_back(w);
    }
    void kernels(std::initializer_list<int32_t> functions) {
        for (int32_t f : functions) add(WorkItem::Kind::Kernel, f);
    }
};

// One training step: batch in, forward, the loss read back (the host waits for it: a long gap),
// backward, update.
void step(Clock& c) {
    c.add(WorkItem::Kind::CopyHtoD, -1);
    c.kernels({1, 2, 3, 2, 3});
    c.add(WorkItem::Kind::CopyDtoH, -1);
    c.now += 50000;  // waiting for the loss
    c.kernels({4, 5, 4, 5, 6, 6});
    c.now += 100;
}

}  // namespace

TEST_CASE("NVTX ranges named 'Train step N' are the iterations, also with --iteration-range as a prefix") {
    Clock c;
    for (int s = 0; s < 4; ++s) {
        int64_t begin = c.now;
        step(c);
        c.model.ranges.push_back({0, begin, c.now, "Train step " + std::to_string(s)});
    }
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "nvtx");
    CHECK_EQ(its.iterations.size(), 4u);
    IterationSet prefix = detect_iterations(c.model, "Train step");
    CHECK_EQ(prefix.source, "nvtx");
    CHECK_EQ(prefix.iterations.size(), 4u);
    IterationSet pattern = detect_iterations(c.model, "Train*");
    CHECK_EQ(pattern.iterations.size(), 4u);
    for (const Iteration& it : its.iterations) {
        CHECK_GT(it.device_end_ns, it.device_begin_ns);
        CHECK_GE(it.device_begin_ns, it.begin_ns);
    }
}

TEST_CASE("by repetition: steps begin where the batch arrives, not at the loss read-back, and never overlap") {
    Clock c;
    c.kernels({90, 91});
    for (int s = 0; s < 6; ++s) step(c);
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "repetition");
    REQUIRE_EQ(its.iterations.size(), 6u);
    CHECK(its.non_training.empty());
    for (size_t i = 0; i < its.iterations.size(); ++i) {
        const Iteration& it = its.iterations[i];
        CHECK_EQ(c.model.work[it.first_work].kind, WorkItem::Kind::CopyHtoD);
        CHECK_EQ(it.end_work - it.first_work, 13u);
        if (i > 0) {
            CHECK_GE(it.begin_ns, its.iterations[i - 1].end_ns);
            CHECK_GE(it.device_begin_ns, its.iterations[i - 1].device_end_ns);
        }
    }
}

TEST_CASE("a validation pass and a checkpoint save between steps are set apart, and the count stays") {
    Clock c;
    c.kernels({90, 91});
    for (int s = 0; s < 9; ++s) {
        step(c);
        if (s == 2 || s == 5) {  // validation: a batch in, forward only, the loss read back
            c.add(WorkItem::Kind::CopyHtoD, -1);
            c.kernels({1, 2, 3, 2, 3});
            c.add(WorkItem::Kind::CopyDtoH, -1);
            c.now += 30000;
        }
        if (s == 3)  // checkpoint: every weight copied out
            for (int k = 0; k < 12; ++k) c.add(WorkItem::Kind::CopyDtoH, -1);
    }
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "repetition");
    CHECK_EQ(its.iterations.size(), 9u);
    CHECK_EQ(its.non_training.size(), 3u);
    for (const Iteration& it : its.iterations) {
        CHECK_EQ(c.model.work[it.first_work].kind, WorkItem::Kind::CopyHtoD);
        CHECK_LE(it.end_work - it.first_work, 13u);
    }
}

TEST_CASE("validation every other step, one after the last step, a checkpoint after a pass: all set apart") {
    // The step's forward ends as the validation pass does (the loss read back), so the period of
    // two steps and a pass repeats exactly; the step is still found, every one of the 8.
    Clock c;
    c.kernels({90, 91});
    auto forward = [&] {
        c.add(WorkItem::Kind::CopyHtoD, -1);
        for (int layer = 0; layer < 4; ++layer) c.kernels({1, 2, 3, 2, 3, 7, 8});
        c.kernels({9, 12});
        c.add(WorkItem::Kind::CopyDtoH, -1);
        c.now += 30000;
    };
    for (int s = 0; s < 8; ++s) {
        forward();
        c.kernels({13, 14});
        for (int layer = 0; layer < 4; ++layer) c.kernels({4, 5, 4, 5, 10, 11, 10});
        c.kernels({6, 6});
        c.now += 100;
        if (s % 2 == 1) forward();  // validation
        if (s == 5)                 // checkpoint, right after the pass
            for (int k = 0; k < 12; ++k) c.add(WorkItem::Kind::CopyDtoH, -1);
    }
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "repetition");
    CHECK_EQ(its.iterations.size(), 8u);
    CHECK_EQ(its.non_training.size(), 5u);  // 4 validation passes, 1 checkpoint
    for (const Iteration& it : its.iterations) {
        CHECK_EQ(c.model.work[it.first_work].kind, WorkItem::Kind::CopyHtoD);
        CHECK_LE(it.end_work - it.first_work, 64u);
    }
}

TEST_CASE("by repetition: a CUDA graph launched once per step is one step, even when it repeats inside") {
    // Each replay launches its kernels at one host instant; the graph itself holds the same three
    // kernels twice (two identical layers), so the kernel sequence repeats with half a step's period.
    Clock c;
    const int replays = 5;
    for (int s = 0; s < replays; ++s) {
        const int64_t launch = c.now;
        int64_t device = launch + 10;
        for (int32_t f : {1, 2, 3, 1, 2, 3}) {
            WorkItem w = test::timed_work(WorkItem::Kind::Kernel, f, c.now);
            w.launch_ns = launch, w.start_ns = device, w.end_ns = device + 8;
            device += 10;
            c.model.work.push_back(w);
        }
        c.now = device + 5000;  // the host waits for the replay, then launches the next
    }
    IterationSet its = detect_iterations(c.model, "");
    REQUIRE_EQ(its.source, "repetition");
    CHECK_EQ(its.iterations.size(), size_t(replays));
    for (size_t i = 1; i < its.iterations.size(); ++i) {
        CHECK_GT(its.iterations[i].begin_ns, its.iterations[i - 1].begin_ns);
        CHECK_GE(its.iterations[i].begin_ns, its.iterations[i - 1].end_ns);
        CHECK_GE(its.iterations[i].device_begin_ns, its.iterations[i - 1].device_end_ns);
    }
}

TEST_CASE("a first step that initialises as it goes (lazy allocation) is a step, not set-up") {
    // Step: batch in, 12 kernels of forward/backward/update. The first step fills each layer's
    // weights inside its forward and zeroes the solver's state before the update: 6 more kernels.
    Clock c;
    for (int s = 0; s < 6; ++s) {
        c.add(WorkItem::Kind::CopyHtoD, -1);
        for (int32_t f : {1, 2, 1, 2, 1, 2}) {
            if (s == 0 && f == 1) c.add(WorkItem::Kind::Kernel, 90);  // the filler, at the first forward
            c.add(WorkItem::Kind::Kernel, f);
        }
        c.kernels({3, 4, 3, 4});
        for (int32_t f : {5, 6}) {
            if (s == 0) c.kernels({91, 92});  // history zeroed just before the first update
            c.add(WorkItem::Kind::Kernel, f);
        }
        c.add(WorkItem::Kind::CopyDtoH, -1);
        c.now += 20000;
    }
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "repetition");
    CHECK_EQ(its.iterations.size(), 6u);
    CHECK(its.non_training.empty());
}

TEST_CASE("gradients zeroed after the update and then the loss read back close that step") {
    // Step: batch in (two micro-batches), forward/backward each, update, sets zeroing the gradients,
    // the loss read back; the next step begins with its batch.
    Clock c;
    std::vector<size_t> batch;
    for (int s = 0; s < 5; ++s) {
        c.now += 30000;  // the host prepares the batch
        for (int micro = 0; micro < 2; ++micro) {
            if (micro == 0) {
                batch.push_back(c.model.work.size());
                c.add(WorkItem::Kind::Set, -1);  // the loss accumulator
            }
            c.add(WorkItem::Kind::CopyHtoD, -1);
            c.kernels({1, 2, 3, 4, 5});
        }
        c.kernels({6, 6, 6});
        for (int g = 0; g < 3; ++g) c.add(WorkItem::Kind::Set, -1);
        c.add(WorkItem::Kind::CopyDtoH, -1);
    }
    IterationSet its = detect_iterations(c.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    for (size_t i = 1; i < its.iterations.size(); ++i) CHECK_EQ(its.iterations[i].first_work, batch[i]);
}

namespace {

// One step of gradient accumulation as PyTorch runs it (cnn_train.py --optimizer adam --accumulate 2,
// measured): two micro-batches, each its batch copied in (two copies), forward (1-4) and backward
// (5-8); the second adds each new gradient to the accumulated one (9 after 6 and after 8); then the
// update (10, 11). Adam's first update zeroes its new state first (sets). `mb2_pause_ns`: how long
// the host waits before the second micro-batch's batch (its copy from pageable memory waits for the
// device), `step_pause_ns` before the next step's.
void accumulation_step(Clock& c, bool first, int64_t mb2_pause_ns, int64_t step_pause_ns,
                       std::vector<size_t>& step_starts) {
    step_starts.push_back(c.model.work.size());
    for (int micro = 0; micro < 2; ++micro) {
        c.add(WorkItem::Kind::CopyHtoD, -1);
        c.add(WorkItem::Kind::CopyHtoD, -1);
        c.kernels({1, 2, 3, 4, 5, 6});
        if (micro == 1) c.kernels({9});
        c.kernels({7, 8});
        if (micro == 1) c.kernels({9});
        c.now += micro == 0 ? mb2_pause_ns : 0;
    }
    if (first)
        for (int state = 0; state < 20; ++state) c.add(WorkItem::Kind::Set, -1);
    c.kernels({10, 11});
    c.now += step_pause_ns;
}

}  // namespace

TEST_CASE("gradient accumulation: the step begins with the micro-batch after the update, wherever the host paused") {
    // The host pauses longer before the second micro-batch than between steps, and Adam's first
    // update follows 20 sets (as many as two batch copies by the boundary score): neither may move
    // the steps' start off the first micro-batch.
    for (int64_t mb2_pause_ns : {int64_t(90000), int64_t(0)}) {
        Clock c;
        c.kernels({90, 91});
        std::vector<size_t> starts;
        for (int s = 0; s < 5; ++s) accumulation_step(c, s == 0, mb2_pause_ns, 30000, starts);
        IterationSet its = detect_iterations(c.model, "");
        CAPTURE(mb2_pause_ns);
        CHECK_EQ(its.source, "repetition");
        REQUIRE_EQ(its.iterations.size(), 5u);
        for (size_t i = 1; i < its.iterations.size(); ++i) CHECK_EQ(its.iterations[i].first_work, starts[i]);
    }
}

namespace {

// One step of data-parallel training as PyTorch's DDP runs it (ddp_train.py on 2 ranks, measured):
// the batch copied in, forward (1-16), backward (17-35) with each bucket's all-reduce (50) as soon as
// the bucket is ready (after 22, 28 and 35), the reduced buckets copied back into .grad
// (device-to-device), then the update's three multi-tensor kernels (60-62): 41 kernels. The first
// step all-reduces the whole model once and its SGD update runs one kernel (37); the second
// broadcasts twice (51) before forward, after DDP rebuilt its buckets (43). Returns the index of the
// step's batch copy.
size_t ddp_step(Clock& c, int step) {
    const size_t batch = c.model.work.size();
    c.add(WorkItem::Kind::CopyHtoD, -1);
    if (step == 1) {
        c.add(WorkItem::Kind::CopyHtoD, -1);  // the broadcast's flag
        c.kernels({51, 51});
    }
    for (int32_t f = 1; f <= 35; ++f) {
        c.kernels({f});
        if (f == 35 || (step > 0 && (f == 22 || f == 28))) c.kernels({50});
    }
    for (int bucket = 0; bucket < 3; ++bucket) c.add(WorkItem::Kind::CopyDtoD, -1);
    if (step == 0)
        c.kernels({60});
    else
        c.kernels({60, 61, 62});
    c.now += 3000;
    return batch;
}

}  // namespace

TEST_CASE("data-parallel steps begin where the batch arrives, not inside the update, whatever the set-up copied") {
    // The set-up (5 kernels) checks an all-reduce (70), copies the parameters in (9 copies) and
    // broadcasts them (80, 81: DDP's construction). Scored like a step boundary, those copies chose
    // the fixed stride's phase 1, which with the first step's 37 kernels and the second's 43 falls
    // between the first and the second update kernel of every later step (as in ddp_train.py).
    Clock c;
    c.kernels({70});
    for (int copy = 0; copy < 9; ++copy) c.add(WorkItem::Kind::CopyHtoD, -1);
    c.kernels({80});
    c.add(WorkItem::Kind::CopyHtoD, -1);
    c.kernels({80, 81, 80});
    std::vector<size_t> batches;
    for (int s = 0; s < 5; ++s) batches.push_back(ddp_step(c, s));
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "repetition");
    REQUIRE_GE(its.iterations.size(), 3u);
    // The steady steps (the third on) begin with their batch; every update stays whole in its step.
    for (size_t s = 2; s < batches.size(); ++s) {
        CAPTURE(s);
        const bool begins_one = std::any_of(its.iterations.begin(), its.iterations.end(),
                                            [&](const Iteration& it) { return it.first_work == batches[s]; });
        CHECK(begins_one);
    }
    for (const Iteration& it : its.iterations) {
        CAPTURE(it.first_work);
        const WorkItem& first = c.model.work[it.first_work];
        CHECK((first.kind != WorkItem::Kind::Kernel || (first.function != 61 && first.function != 62)));
    }
}

namespace {

// One step of ddp_train.py on 2 ranks as recorded without step ranges (rank 0, 4 steps): the batch
// in, forward (1-14), backward (15-35) with each bucket's all-reduce (50) once the bucket is ready
// (after 25, 31 and 35), the update's three multi-tensor kernels (60, 61, 61: SGD's momentum scaled,
// then two adds): 42 kernels. The first step all-reduces the whole model once (after 35), runs the
// last update kernel only (SGD makes its momentum by copying the gradients), and runs four backward
// elementwise kernels of another variant (123, 124, 129, 130 for 23, 24, 29, 30: the vector width
// PyTorch picks from the alignment of the gradients it has just allocated): 38 kernels. The second
// step broadcasts the order of the buckets DDP rebuilt, twice (51), each a flag copied in and read
// back, after its batch and before its forward. Returns the index of the step's batch copy.
size_t ddp_step_as_recorded(Clock& c, int step) {
    const size_t batch = c.model.work.size();
    c.add(WorkItem::Kind::CopyHtoD, -1);
    c.add(WorkItem::Kind::CopyHtoD, -1);
    for (int broadcast = 0; step == 1 && broadcast < 2; ++broadcast) {
        c.add(WorkItem::Kind::CopyHtoD, -1);
        c.kernels({51});
        c.add(WorkItem::Kind::CopyDtoH, -1);
        c.now += 5000;  // the host reads the order back
    }
    for (int32_t f = 1; f <= 35; ++f) {
        const bool other_variant = step == 0 && (f == 23 || f == 24 || f == 29 || f == 30);
        c.kernels({other_variant ? f + 100 : f});
        if (f == 35 || (step > 0 && (f == 25 || f == 31))) c.kernels({50});
    }
    if (step == 0)
        c.kernels({61});  // the parameters moved by the gradients: the momentum is their copy
    else
        c.kernels({60, 61, 61});  // momentum scaled, the gradients added to it, the parameters moved
    c.now += 30000;               // the host synchronizes, then makes the next batch
    return batch;
}

}  // namespace

TEST_CASE("DDP's first step is a step: one whole-model all-reduce, one update kernel, other kernel variants") {
    // Before, the first step was set-up: it leaves out 2 all-reduces and 2 update kernels and runs 4
    // kernels of other variants (more than the tenth of the step the scan backwards allowed), and the
    // second step's broadcasts stood between it and the first matched step. A first step also began
    // right after the set-up's last kernel, taking in the set-up's copies into the parameters (which
    // then looked made in the step, not carried in) and its read-backs.
    Clock c;
    c.kernels({70});  // the all-reduce the script checks
    for (int copy = 0; copy < 9; ++copy) c.add(WorkItem::Kind::CopyHtoD, -1);
    c.kernels({80, 80, 81, 80});  // DDP's construction broadcasts the parameters
    for (int copy = 0; copy < 8; ++copy) c.add(WorkItem::Kind::CopyDtoD, -1);  // ... copied back into them
    for (int copy = 0; copy < 8; ++copy) c.add(WorkItem::Kind::CopyDtoH, -1);  // the script's checksum
    c.now += 40000;
    std::vector<size_t> batches;
    for (int s = 0; s < 4; ++s) batches.push_back(ddp_step_as_recorded(c, s));
    IterationSet its = detect_iterations(c.model, "");
    CHECK_EQ(its.source, "repetition");
    REQUIRE_EQ(its.iterations.size(), 4u);
    for (size_t s = 0; s < batches.size(); ++s) {
        CAPTURE(s);
        CHECK_EQ(its.iterations[s].first_work, batches[s]);
    }
    CHECK(its.non_training.empty());
}

TEST_CASE("set-up that runs part of a step's kernels is no first step") {
    // A forward pass before training (a warm-up, a validation) ends as no step does (a read-back, no
    // update kernel) and runs less than four fifths of the step: set-up either way.
    Clock c;
    c.add(WorkItem::Kind::CopyHtoD, -1);
    for (int32_t f = 1; f <= 14; ++f) c.kernels({f});
    c.kernels({62});  // ends with the step's last kernel, yet holds only its forward
    c.now += 40000;
    std::vector<size_t> batches;
    for (int s = 1; s < 5; ++s) batches.push_back(ddp_step_as_recorded(c, s == 1 ? 2 : s));
    IterationSet its = detect_iterations(c.model, "");
    REQUIRE_EQ(its.iterations.size(), 4u);
    CHECK_EQ(its.iterations[0].first_work, batches[0]);
}

namespace {

// One ZeRO data-parallel step as dp_train --overlap buckets --zero runs it (recorded, one rank): the
// step's buffers allocated before its first kernel and freed after its last (the batch, filled on the
// device, and the activations: no copy, no set), the fill (1), forward (2 x8), backward (3, 4) with
// each bucket's reduce-scatter (50) once it is ready, then per shard the update (60) and the weights'
// all-gather (51). `stall_ns`: a host stall before the third backward GEMM (a loaded machine).
size_t zero_step(Clock& c, int64_t stall_ns) {
    std::vector<size_t> buffers;
    for (int b = 0; b < 9; ++b) {
        Allocation a;
        a.id = int64_t(c.model.allocations.size()) + 1;
        a.address = 0x1000000 + uint64_t(a.id) * 0x10000;
        a.bytes = 65536;
        a.alloc_ns = c.now++;
        buffers.push_back(c.model.allocations.size());
        c.model.allocations.push_back(a);
    }
    const size_t first = c.model.work.size();
    c.kernels({1, 2, 2, 2, 2, 2, 2, 2, 2});
    for (int bucket = 0; bucket < 4; ++bucket) {
        if (bucket == 1) c.now += stall_ns;
        c.kernels({3, 4, 50});
    }
    for (int shard = 0; shard < 4; ++shard) c.kernels({60, 51});
    for (size_t b : buffers) c.model.allocations[b].free_ns = c.now++;
    c.now += 300000;  // the host between steps: the next batch's buffers
    return first;
}

}  // namespace

TEST_CASE("a step's buffers, not a host stall, place the boundary when no batch is copied in") {
    // dp_train --zero under load (1 recording in 10): a stall inside backward outweighed the pauses
    // between steps, and with no copy or set to mark the batch, the steps began inside backward. Its
    // buffers, made before the step's first kernel and freed after its last, live exactly one period:
    // only the true boundary leaves them whole.
    for (int64_t stall_ns : {int64_t(0), int64_t(5000000)}) {
        Clock c;
        c.kernels({90, 91});
        c.now += 300000;
        std::vector<size_t> starts;
        for (int s = 0; s < 6; ++s) starts.push_back(zero_step(c, s == 2 ? stall_ns : 0));
        IterationSet its = detect_iterations(c.model, "");
        CAPTURE(stall_ns);
        CHECK_EQ(its.source, "repetition");
        CHECK(its.non_training.empty());
        REQUIRE_EQ(its.iterations.size(), starts.size());
        for (size_t s = 0; s < starts.size(); ++s) {
            CAPTURE(s);
            CHECK_EQ(its.iterations[s].first_work, starts[s]);
        }
    }
}
