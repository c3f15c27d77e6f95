// The tagging rules on hand-built runs whose answer is known, without a trace file.
#include <doctest/doctest.h>

#include "iterations.h"
#include "rules.h"
#include "rules_context.h"
#include "timed_work.h"

#include <cctype>
#include <map>
#include <string>

using namespace tbdprof::tagger;

TEST_CASE("the step period wins over motifs inside a step") {
    // Init kernels, then 6 steps of: 4 time steps of (a b c), a loss kernel, 4 backward (d e), an update.
    std::vector<int32_t> seq = {90, 91};
    for (int step = 0; step < 6; ++step) {
        for (int t = 0; t < 4; ++t) seq.insert(seq.end(), {1, 2, 3});
        seq.push_back(4);
        for (int t = 0; t < 4; ++t) seq.insert(seq.end(), {5, 6});
        seq.push_back(7);
    }
    CHECK_EQ(find_period(seq, 0.02), 22u);
    CHECK_EQ(find_period({1, 2, 3, 4, 5, 6, 7, 8}, 0.02), 0u);
}

namespace {
// A tiny training run: weights W (GEMM operand), bias b (read by a const kernel), gradient G (zeroed,
// written by a GEMM), bias gradient gb (written by a kernel), momentum M, per-step input X (copied
// in), activation A, and a cuBLAS workspace.
struct Run {
    TraceModel model;
    std::map<std::string, int32_t> ids;
    int64_t now = 1000;

    int32_t alloc(const std::string& name, int64_t bytes) {
        Allocation a;
        a.id = static_cast<int64_t>(model.allocations.size()) + 1;
        a.address = 0x10000 * uint64_t(a.id);
        a.bytes = bytes;
        a.alloc_ns = now++;
        ids[name] = static_cast<int32_t>(model.allocations.size());
        model.allocations.push_back(a);
        return ids[name];
    }
    void free(const std::string& name) { model.allocations[size_t(ids[name])].free_ns = now++; }
    void work(WorkItem::Kind kind, int32_t function, std::vector<Touch> touches, int32_t call = kNone) {
        WorkItem w = tbdprof::tagger::test::timed_work(kind, function, now);
        w.library_call = call;
        w.touches = std::move(touches);
        model.work.push_back(std::move(w));
    }
    int32_t gemm(const std::string& a, const std::string& b, const std::string& c) {
        LibraryCall call;
        call.a = ids[a];
        call.b = ids[b];
        call.c = ids[c];
        call.workspace = ids.count("ws") ? ids["ws"] : kNone;
        model.library_calls.push_back(call);
        auto index = static_cast<int32_t>(model.library_calls.size() - 1);
        std::vector<Touch> t = {{call.a, Access::Read}, {call.b, Access::Read}, {call.c, Access::Write}};
        if (call.workspace != kNone) t.push_back({call.workspace, Access::Write});
        work(WorkItem::Kind::Kernel, 100, t, index);
        return index;
    }
};

// stale_word: forward's bias kernel also holds the bias gradient's address in a word of its
// (mangled, by-value struct) argument, which the trace records as a writable pointer (PyTorch's
// elementwise kernels do); gradient_gemm collects the launch of each step's GEMM writing G.
Run training_run(int steps, bool stale_word = false, std::vector<int64_t>* gradient_gemm = nullptr) {
    Run r;
    r.alloc("ws", 1 << 20);
    r.alloc("W", 4096);
    r.alloc("b", 64);
    r.alloc("G", 4096);
    r.alloc("gb", 64);
    r.alloc("X", 8192);
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    for (int s = 0; s < steps; ++s) {
        r.now += 1000;
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.work(WorkItem::Kind::Set, -1, {{r.ids["G"], Access::Write}});
        r.alloc("A", 16384);
        r.gemm("X", "W", "A");
        std::vector<Touch> bias = {{r.ids["b"], Access::Read}, {r.ids["A"], Access::Write}};
        if (stale_word) bias.push_back({r.ids["gb"], Access::Write});
        r.work(WorkItem::Kind::Kernel, 1, bias);
        r.alloc("dA", 16384);
        r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        if (gradient_gemm) gradient_gemm->push_back(r.now);
        r.gemm("X", "dA", "G");
        r.work(WorkItem::Kind::Kernel, 3, {{r.ids["dA"], Access::Read}, {r.ids["gb"], Access::Write}});
        if (s == 0) r.alloc("M", 4096);
        r.work(WorkItem::Kind::Kernel, 4,
               {{r.ids["W"], Access::Write}, {r.ids["G"], Access::Read}, {r.ids["M"], Access::Write}});
        r.work(WorkItem::Kind::Kernel, 5, {{r.ids["b"], Access::Write}, {r.ids["gb"], Access::Read}});
        r.free("A");
        r.free("dA");
    }
    return r;
}
}  // namespace

TEST_CASE("an SGD-with-momentum step is tagged from data flow and lifetimes") {
    Run r = training_run(5);
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    CHECK_EQ(its.source, "repetition");
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("ws"), "workspace");
    CHECK_EQ(category("W"), "weights");
    CHECK_EQ(category("b"), "weights");
    CHECK_EQ(category("G"), "gradients");
    CHECK_EQ(category("gb"), "gradients");
    CHECK_EQ(category("M"), "optimizer_state");
    CHECK_EQ(category("X"), "input");
    CHECK_EQ(category("A"), "activations");  // the last step's A and dA (earlier ones were renamed)
    CHECK_EQ(category("dA"), "activations");
    for (const Tag& t : result.tags) {
        CHECK_FALSE(t.rule.empty());
        CHECK_GT(t.confidence, 0.0);
    }
    REQUIRE_EQ(result.phases.size(), 15u);
    CHECK_EQ(result.phases[0].kind, "forward");
    CHECK_LT(result.phases[0].end_ns, result.phases[2].begin_ns);
}

TEST_CASE("one forward pass has no iterations, and allocations get 'other' with a reason") {
    Run r = training_run(1);
    IterationSet its = detect_iterations(r.model, "");
    CHECK(its.iterations.empty());
    CHECK_FALSE(its.note.empty());
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(result.tags[size_t(r.ids["ws"])].category, "workspace");
    CHECK_EQ(result.tags[size_t(r.ids["A"])].category, "other");
    CHECK_FALSE(result.tags[size_t(r.ids["A"])].reason.empty());
}

TEST_CASE("NVTX step ranges take precedence over repetition") {
    Run r = training_run(4);
    // Two ranges covering the whole run: two iterations, whatever the kernels do.
    int64_t mid = r.model.work[r.model.work.size() / 2].launch_ns;
    r.model.ranges.push_back({0, 0, mid, "ProfilerStep#1"});
    r.model.ranges.push_back({0, mid, r.now, "ProfilerStep#2"});
    IterationSet its = detect_iterations(r.model, "");
    CHECK_EQ(its.source, "nvtx");
    CHECK_EQ(its.iterations.size(), 2u);
    IterationSet named = detect_iterations(r.model, "no such range");
    CHECK_EQ(named.source, "repetition");
}

TEST_CASE("backward begins at a gradient write a library call shows, not at a kernel's stale pointer word") {
    for (bool stale_word : {false, true}) {
        CAPTURE(stale_word);
        std::vector<int64_t> gradient_gemm;
        Run r = training_run(5, stale_word, &gradient_gemm);
        IterationSet its = detect_iterations(r.model, "");
        REQUIRE_EQ(its.iterations.size(), 5u);
        TagResult result = tag_allocations(r.model, its);
        REQUIRE_EQ(result.tags[size_t(r.ids["gb"])].category, "gradients");
        int backwards = 0;
        for (const Phase& p : result.phases) {
            if (p.kind != "backward") continue;
            // The step's GEMM writing G, its library call's output: forward's bias kernel (which
            // points at gb too when stale_word) is forward's.
            CHECK_EQ(p.begin_ns, gradient_gemm[p.iteration]);
            ++backwards;
        }
        CHECK_EQ(backwards, 5);
    }
}

TEST_CASE("phases come from NVTX forward/backward/optimizer ranges when a step has them") {
    Run r = training_run(4);
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 4u);
    const Iteration& second = its.iterations[1];
    int64_t third = (second.end_ns - second.begin_ns) / 3;
    r.model.ranges.push_back({0, second.begin_ns, second.begin_ns + third, "forward"});
    r.model.ranges.push_back({0, second.begin_ns + third, second.begin_ns + 2 * third, "## backward ##"});
    r.model.ranges.push_back({0, second.begin_ns + 2 * third, second.end_ns, "Optimizer.step#SGD.step"});
    TagResult result = tag_allocations(r.model, its);
    int from_ranges = 0;
    for (const Phase& p : result.phases)
        if (p.iteration == 1) {
            if (p.kind == "backward") CHECK_EQ(p.begin_ns, second.begin_ns + third);
            ++from_ranges;
        }
    CHECK_EQ(from_ranges, 3);
}

TEST_CASE("without any data flow (an imported trace), lifetimes and ranges decide, at lower confidence") {
    Run r = training_run(5);
    for (WorkItem& w : r.model.work) w.touches.clear();
    r.model.library_calls.clear();
    for (WorkItem& w : r.model.work) w.library_call = kNone;
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    // The momentum buffer was created inside the first step's optimizer range.
    const Allocation& momentum = r.model.allocations[size_t(r.ids["M"])];
    r.model.ranges.push_back({0, momentum.alloc_ns - 1, momentum.alloc_ns + 1, "Optimizer.step#SGD.step"});
    TagResult result = tag_allocations(r.model, its);
    auto tag = [&](const char* name) { return result.tags[size_t(r.ids[name])]; };
    CHECK_EQ(tag("W").category, "weights");
    CHECK_EQ(tag("M").category, "optimizer_state");
    CHECK_EQ(tag("A").category, "activations");
    CHECK_LE(tag("W").confidence, 0.5);
    CHECK_NE(tag("W").rule.find("lifetime"), std::string::npos);
}

TEST_CASE("gradient clipping before the update is optimizer work; backward kernels are not") {
    // The training run with a clipped update: after backward, the norm buffer N is zeroed, a kernel
    // reads the gradients and writes N, N is read back to the host (the host passes the scale to the
    // update as an argument). Then a kernel reading an activation (a loss read back) before it in
    // the second variant must stay out of the optimizer phase.
    for (bool loss_readback : {false, true}) {
        Run r;
        r.alloc("ws", 1 << 20);
        r.alloc("W", 4096);
        r.alloc("G", 4096);
        r.alloc("X", 8192);
        r.alloc("N", 4);
        r.alloc("L", 64);
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
        std::vector<int64_t> norm_set, update, loss_kernel;
        for (int s = 0; s < 5; ++s) {
            r.now += 1000;
            r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
            r.work(WorkItem::Kind::Set, -1, {{r.ids["G"], Access::Write}});
            r.alloc("A", 16384);
            r.gemm("X", "W", "A");
            r.alloc("dA", 16384);
            r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
            r.gemm("X", "dA", "G");
            if (loss_readback) {
                loss_kernel.push_back(r.now);
                r.work(WorkItem::Kind::Kernel, 6, {{r.ids["A"], Access::Read}, {r.ids["L"], Access::Write}});
                r.work(WorkItem::Kind::CopyDtoH, -1, {{r.ids["L"], Access::Read}});
            }
            norm_set.push_back(r.now);
            r.work(WorkItem::Kind::Set, -1, {{r.ids["N"], Access::Write}});
            r.work(WorkItem::Kind::Kernel, 7, {{r.ids["G"], Access::Read}, {r.ids["N"], Access::Write}});
            r.work(WorkItem::Kind::CopyDtoH, -1, {{r.ids["N"], Access::Read}});
            update.push_back(r.now);
            r.work(WorkItem::Kind::Kernel, 4, {{r.ids["W"], Access::Write}, {r.ids["G"], Access::Read}});
            r.free("A");
            r.free("dA");
        }
        IterationSet its = detect_iterations(r.model, "");
        REQUIRE_EQ(its.iterations.size(), 5u);
        TagResult result = tag_allocations(r.model, its);
        CHECK_EQ(result.tags[size_t(r.ids["G"])].category, "gradients");
        int optimizers = 0;
        for (const Phase& p : result.phases) {
            if (p.kind == "optimizer") {
                CHECK_EQ(p.begin_ns, norm_set[p.iteration]);
                CHECK_LT(p.begin_ns, update[p.iteration]);
                ++optimizers;
            }
            if (p.kind == "backward" && loss_readback) CHECK_LT(p.begin_ns, loss_kernel[p.iteration]);
        }
        CHECK_EQ(optimizers, 5);
    }
}

namespace {
// A level-1 cuBLAS call as the trace gives it: x (operand a) read, y (operand c) written, and read
// first when the op says so (axpy, scal).
void blas1(Run& r, const std::string& x, const std::string& y, bool output_read) {
    LibraryCall call;
    call.a = r.ids[x];
    call.c = r.ids[y];
    call.output_read = output_read;
    r.model.library_calls.push_back(call);
    auto index = static_cast<int32_t>(r.model.library_calls.size() - 1);
    std::vector<Touch> t;
    if (call.a != call.c) t.push_back({call.a, Access::Read});
    t.push_back({call.c, Access::Write});
    r.work(WorkItem::Kind::Kernel, 200, t, index);
}
}  // namespace

TEST_CASE("a solver built from cuBLAS level-1 calls is the update: axpy into the weights, history by scal and axpy") {
    // Caffe-like SGD: G zeroed, written by backward's GEMM; H = m H + lr G (scal, axpy), G = H (copy),
    // W -= G (axpy). Everything persistent, the history allocated just before the first update.
    Run r;
    r.alloc("W", 4096);
    r.alloc("X", 8192);
    r.alloc("A", 16384);
    r.alloc("dA", 16384);
    r.alloc("G", 4096);
    for (int s = 0; s < 5; ++s) {
        r.now += 1000;
        r.work(WorkItem::Kind::Set, -1, {{r.ids["G"], Access::Write}});
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.gemm("X", "W", "A");
        r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.gemm("X", "dA", "G");
        if (s == 0) r.alloc("H", 4096);
        blas1(r, "H", "H", true);   // scal
        blas1(r, "G", "H", true);   // axpy
        blas1(r, "H", "G", false);  // copy
        blas1(r, "G", "W", true);   // axpy: the weights' update
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("W"), "weights");
    CHECK_EQ(category("G"), "gradients");
    CHECK_EQ(category("H"), "optimizer_state");
    CHECK_EQ(category("A"), "activations");
    CHECK_EQ(category("X"), "input");
    int optimizers = 0;
    for (const Phase& p : result.phases) optimizers += p.kind == "optimizer";
    CHECK_EQ(optimizers, 5);
}

TEST_CASE("a bias gradient reduced after the last weight-gradient GEMM is backward, not the update") {
    // Planned buffers: dY (an activation gradient) is read by the weight-gradient GEMM, then by the
    // bias-gradient kernel writing gb; the update follows (one kernel per parameter).
    Run r;
    r.alloc("W", 4096);
    r.alloc("b", 64);
    r.alloc("X", 8192);
    r.alloc("Y", 16384);
    r.alloc("dY", 16384);
    r.alloc("G", 4096);
    r.alloc("gb", 64);
    for (int s = 0; s < 5; ++s) {
        r.now += 1000;
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.gemm("X", "W", "Y");
        r.work(WorkItem::Kind::Kernel, 1, {{r.ids["b"], Access::Read}, {r.ids["Y"], Access::Write}});
        r.work(WorkItem::Kind::Kernel, 2, {{r.ids["Y"], Access::Read}, {r.ids["dY"], Access::Write}});
        r.gemm("dY", "X", "G");
        r.work(WorkItem::Kind::Kernel, 3, {{r.ids["dY"], Access::Read}, {r.ids["gb"], Access::Write}});
        r.work(WorkItem::Kind::Kernel, 4, {{r.ids["W"], Access::Write}, {r.ids["G"], Access::Read}});
        r.work(WorkItem::Kind::Kernel, 4, {{r.ids["b"], Access::Write}, {r.ids["gb"], Access::Read}});
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("gb"), "gradients");
    CHECK_EQ(category("dY"), "activations");
    CHECK_EQ(category("G"), "gradients");
    CHECK_EQ(category("b"), "weights");
}

TEST_CASE("a gradient copied into new optimizer state in the first step is a gradient") {
    // SGD with momentum and per-step gradients: in the first step the momentum buffer M is made by
    // copying the gradient and the update reads M; later steps read the gradient and update M.
    Run r;
    r.alloc("ws", 1 << 20);
    r.alloc("W", 4096);
    r.alloc("X", 8192);
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    int32_t first_gradient = kNone;
    for (int s = 0; s < 5; ++s) {
        r.now += 1000;
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.alloc("A", 16384);
        r.gemm("X", "W", "A");
        r.work(WorkItem::Kind::Kernel, 1, {{r.ids["A"], Access::Write}});
        r.alloc("dA", 16384);
        r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.alloc("G", 4096);
        r.gemm("X", "dA", "G");
        if (s == 0) {
            first_gradient = r.ids["G"];
            r.alloc("M", 4096);
            r.work(WorkItem::Kind::CopyDtoD, -1, {{r.ids["G"], Access::Read}, {r.ids["M"], Access::Write}});
            r.work(WorkItem::Kind::Kernel, 4, {{r.ids["W"], Access::Write}, {r.ids["M"], Access::Read}});
        } else {
            r.work(WorkItem::Kind::Kernel, 4,
                   {{r.ids["W"], Access::Write}, {r.ids["G"], Access::Read}, {r.ids["M"], Access::Write}});
        }
        r.free("A");
        r.free("dA");
        r.free("G");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(result.tags[size_t(r.ids["M"])].category, "optimizer_state");
    CHECK_EQ(result.tags[size_t(r.ids["G"])].category, "gradients");  // the last step's
    CHECK_EQ(result.tags[size_t(first_gradient)].category, "gradients");
    CHECK_EQ(result.tags[size_t(first_gradient)].rule, "copied-into-optimizer-state");
}

TEST_CASE("a lazy first step's Adam is the update from its first kernel, over per-step gradients and temporaries") {
    // Adam as PyTorch's foreach kernels run it, every operand through a writable pointer in a struct:
    // the moments M1, M2 are made in the first step (zeroed by a set), the gradient G is made anew
    // in each step (zero_grad(set_to_none=True)), S is the update's own temporary (the square root
    // of the second moment). Only the last kernel writes the weight W; it also carries G among its
    // operands (PyTorch's kernel argument struct keeps the pointers of the call before).
    // stale_words: the moment kernels also point at the batch X (last touched by backward's GEMM)
    // and at forward's loss L (untouched by backward), as the unused slots of PyTorch's foreach
    // metadata do when nothing else overwrote them (a run without torch.profiler): neither is a
    // value backward hands the update, so the update still begins at the first moment kernel.
    // consumed_word (with stale_words): they also point at an activation gradient P that a backward
    // kernel wrote and another read through a pointer to const before backward's GEMM ran past it
    // (max pooling's backward, under expandable segments): consumed before the update, not its input.
    for (int variant = 0; variant < 3; ++variant) {
        const bool stale_words = variant >= 1, consumed_word = variant == 2;
        CAPTURE(stale_words);
        CAPTURE(consumed_word);
        Run r;
        r.alloc("W", 4096);
        r.alloc("X", 8192);
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
        int32_t first_m1 = kNone;
        for (int s = 0; s < 5; ++s) {
            r.now += 1000;
            r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
            r.alloc("A", 16384);
            r.gemm("X", "W", "A");
            r.alloc("L", 64);
            r.work(WorkItem::Kind::Kernel, 3, {{r.ids["L"], Access::Write}, {r.ids["A"], Access::Read}});
            r.alloc("dA", 16384);
            r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
            if (consumed_word) {
                r.alloc("P", 16384);
                r.work(WorkItem::Kind::Kernel, 4, {{r.ids["A"], Access::Read}, {r.ids["P"], Access::Write}});
                r.work(WorkItem::Kind::Kernel, 5, {{r.ids["P"], Access::Read}, {r.ids["dA"], Access::Write}});
            }
            r.alloc("G", 4096);
            r.gemm("X", "dA", "G");
            r.free("A");
            r.free("dA");
            if (s == 0) {
                r.alloc("M1", 4096);
                r.alloc("M2", 4096);
                first_m1 = r.ids["M1"];
                r.work(WorkItem::Kind::Set, -1, {{r.ids["M1"], Access::Write}});
                r.work(WorkItem::Kind::Set, -1, {{r.ids["M2"], Access::Write}});
            }
            auto w = [&](const char* name) { return Touch{r.ids[name], Access::Write}; };
            std::vector<Touch> stale;
            if (consumed_word)
                stale = {w("X"), w("L"), w("P")};
            else if (stale_words)
                stale = {w("X"), w("L")};
            auto with_stale = [&](std::vector<Touch> touches) {
                touches.insert(touches.end(), stale.begin(), stale.end());
                return touches;
            };
            r.work(WorkItem::Kind::Kernel, 10, with_stale({w("M1"), w("G")}));
            r.work(WorkItem::Kind::Kernel, 11, with_stale({w("M2"), w("G")}));
            r.alloc("S", 4096);
            r.work(WorkItem::Kind::Kernel, 12, with_stale({w("S"), w("M2")}));
            r.work(WorkItem::Kind::Kernel, 13, {w("W"), w("M1"), w("S"), w("G")});
            r.free("S");
            r.free("G");
            r.free("L");
            if (consumed_word) r.free("P");
        }
        IterationSet its = detect_iterations(r.model, "");
        REQUIRE_EQ(its.iterations.size(), 5u);
        TagResult result = tag_allocations(r.model, its);
        auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
        CHECK_EQ(category("M1"), "optimizer_state");
        CHECK_EQ(category("M2"), "optimizer_state");
        CHECK_EQ(result.tags[size_t(first_m1)].category, "optimizer_state");
        CHECK_EQ(category("G"), "gradients");  // the last step's
        CHECK_EQ(category("W"), "weights");
        // Every Adam kernel of every step is the update, the first step's included.
        size_t update_kernels = 0;
        for (size_t k = 0; k < r.model.work.size(); ++k)
            update_kernels += result.optimizer_work[k] && r.model.work[k].function >= 10;
        CHECK_EQ(update_kernels, 20u);
    }
}

TEST_CASE("a weight cast into a fresh GEMM operand before each use is a weight, not a gradient") {
    // bf16 autocast: each step the FP32 weight W is copied into a new BF16 tensor Wb (through a
    // writable pointer) for the forward GEMM and again for the recomputed forward in backward; the
    // update rewrites W from the gradient G. A layer-norm weight V is read as it is (read-only) and
    // tells where the update is. A bias gradient gb, zeroed by a kernel and accumulated by a
    // reduction that reads dY, stays a gradient.
    Run r;
    r.alloc("W", 4096);
    r.alloc("V", 256);
    r.alloc("X", 8192);
    r.alloc("gb", 64);
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    for (int s = 0; s < 5; ++s) {
        r.now += 1000;
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.work(WorkItem::Kind::Kernel, 1, {{r.ids["gb"], Access::Write}});
        for (int pass = 0; pass < 2; ++pass) {  // forward, then the recomputed forward
            r.alloc("Wb", 2048);
            r.work(WorkItem::Kind::Kernel, 2, {{r.ids["W"], Access::Write}, {r.ids["Wb"], Access::Write}});
            r.alloc("A", 16384);
            r.gemm("X", "Wb", "A");
            r.work(WorkItem::Kind::Kernel, 7, {{r.ids["V"], Access::Read}, {r.ids["A"], Access::Write}});
            r.free("Wb");
            if (pass == 0) r.free("A");
        }
        r.alloc("dY", 16384);
        r.work(WorkItem::Kind::Kernel, 3, {{r.ids["A"], Access::Read}, {r.ids["dY"], Access::Write}});
        r.alloc("G", 4096);
        r.gemm("dY", "X", "G");
        r.work(WorkItem::Kind::Kernel, 4, {{r.ids["dY"], Access::Write}, {r.ids["gb"], Access::Write}});
        r.free("A");
        r.free("dY");
        r.work(WorkItem::Kind::Kernel, 5,  // one update kernel over all parameters, as a foreach optimizer's
               {{r.ids["W"], Access::Write},
                {r.ids["V"], Access::Write},
                {r.ids["G"], Access::Read},
                {r.ids["gb"], Access::Read}});
        r.free("G");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("W"), "weights");
    CHECK_EQ(result.tags[size_t(r.ids["W"])].rule, "converted-for-products");
    CHECK_EQ(category("V"), "weights");
    CHECK_EQ(category("G"), "gradients");
    CHECK_EQ(category("gb"), "gradients");
}

TEST_CASE("SGD momentum in foreach kernels: the kernel adding the gradient into the momentum is the update") {
    // PyTorch's SGD with momentum on a real GPU: three foreach kernels, every operand a writable
    // word of a by-value struct: buf *= momentum (M, Mb), buf += grad (M, Mb, G, gb), param -= lr*buf
    // (W, b, M, Mb). Only the last writes the weights and it never points at the gradients, which are
    // made anew each step (G by backward's GEMM, gb by a reduction over the activation gradient dA,
    // through writable words too). In the first step the momentum is a copy of the gradient. The
    // update is the three kernels, so backward ends before them; the reduction stays backward's.
    Run r;
    r.alloc("W", 4096);
    r.alloc("b", 64);
    r.alloc("X", 8192);
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    auto u = [&](const char* name) { return Touch{r.ids[name], Access::Unknown}; };
    std::vector<size_t> momentum_kernels, reductions;
    for (int s = 0; s < 6; ++s) {
        r.now += 1000;
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.alloc("A", 16384);
        r.gemm("X", "W", "A");
        r.work(WorkItem::Kind::Kernel, 1, {{r.ids["b"], Access::Read}, {r.ids["A"], Access::Write}});
        r.alloc("dA", 16384);
        r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.alloc("G", 4096);
        r.gemm("X", "dA", "G");
        r.alloc("gb", 64);
        reductions.push_back(r.model.work.size());
        r.work(WorkItem::Kind::Kernel, 3, {u("dA"), u("gb")});
        r.free("A");
        r.free("dA");
        if (s == 0) {
            r.alloc("M", 4096);
            r.alloc("Mb", 64);
            r.work(WorkItem::Kind::CopyDtoD, -1, {{r.ids["G"], Access::Read}, {r.ids["M"], Access::Write}});
            r.work(WorkItem::Kind::CopyDtoD, -1, {{r.ids["gb"], Access::Read}, {r.ids["Mb"], Access::Write}});
        } else {
            momentum_kernels.push_back(r.model.work.size());
            r.work(WorkItem::Kind::Kernel, 10, {u("M"), u("Mb")});
            momentum_kernels.push_back(r.model.work.size());
            r.work(WorkItem::Kind::Kernel, 11, {u("M"), u("Mb"), u("G"), u("gb")});
        }
        r.work(WorkItem::Kind::Kernel, 12, {u("W"), u("b"), u("M"), u("Mb")});
        r.free("G");
        r.free("gb");
    }
    // The first step (copies where the others have two kernels) may stay outside the repeated steps.
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_GE(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("W"), "weights");
    CHECK_EQ(category("b"), "weights");
    CHECK_EQ(category("M"), "optimizer_state");
    CHECK_EQ(category("Mb"), "optimizer_state");
    CHECK_EQ(category("G"), "gradients");  // the last step's
    CHECK_EQ(category("gb"), "gradients");
    CHECK_EQ(category("dA"), "activations");
    for (size_t k : momentum_kernels) CHECK(result.optimizer_work[k]);
    for (size_t k : reductions) CHECK_FALSE(result.optimizer_work[k]);
}

TEST_CASE("a copy into new optimizer state whose source a GEMM read earlier in the step is no gradient") {
    // As "a gradient copied into new optimizer state", but the first step's copy reads P, a buffer
    // forward's GEMM took as an input before backward wrote it: what a pooled segment's sub-range
    // cut too coarsely looks like (an activation and the gradient later put at its address). A
    // product call never reads a weight gradient, so the copy does not make P a gradient.
    Run r;
    r.alloc("ws", 1 << 20);
    r.alloc("W", 4096);
    r.alloc("W2", 4096);
    r.alloc("X", 8192);
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W2"], Access::Write}});
    int32_t first_source = kNone;
    for (int s = 0; s < 5; ++s) {
        r.now += 1000;
        const int64_t step_begin_ns = r.now - 1;
        r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.alloc("P", 16384);
        r.gemm("X", "W", "P");
        r.work(WorkItem::Kind::Kernel, 1, {{r.ids["P"], Access::Write}});  // an activation function in place
        r.alloc("A", 16384);
        r.gemm("P", "W2", "A");
        r.alloc("dA", 16384);
        r.work(WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.gemm("X", "dA", "P");  // the gradient of W, written where forward's P was
        if (s == 0) {
            first_source = r.ids["P"];
            r.alloc("M", 4096);
            r.work(WorkItem::Kind::CopyDtoD, -1, {{r.ids["P"], Access::Read}, {r.ids["M"], Access::Write}});
            r.work(WorkItem::Kind::Kernel, 4, {{r.ids["W"], Access::Write}, {r.ids["M"], Access::Read}});
        } else {
            r.work(WorkItem::Kind::Kernel, 4,
                   {{r.ids["W"], Access::Write}, {r.ids["P"], Access::Read}, {r.ids["M"], Access::Write}});
        }
        r.free("A");
        r.free("dA");
        r.free("P");
        // Three GEMMs a step of one shape: the program's step ranges say where steps begin.
        r.model.ranges.push_back({0, step_begin_ns, r.now, "ProfilerStep#" + std::to_string(s)});
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(result.tags[size_t(r.ids["M"])].category, "optimizer_state");
    CHECK_NE(result.tags[size_t(first_source)].rule, "copied-into-optimizer-state");
}

TEST_CASE("range names are searched without regard to case: as a lowered copy's find, on 100,000 texts") {
    // Texts of a few letters in both cases and separators, so that words occur, partly and whole.
    const std::string alphabet = "oOpPtTiImMzZrR.#_ ";
    const std::string words[] = {"opt", "optimizer", "o", "", "mizer", "z.#"};
    uint64_t state = 2463534242ull;
    const auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    rules::LoweredName lowered_name;  // one buffer for all, as the tagger uses it
    const auto contains = [&lowered_name](std::string_view text, std::string_view word) {
        return lowered_name(text).find(word) != std::string_view::npos;
    };
    size_t differ = 0, found = 0;
    for (int i = 0; i < 100000; ++i) {
        std::string text;
        for (size_t c = next() % 14; c > 0; --c) text += alphabet[next() % alphabet.size()];
        std::string lowered = text;
        for (char& ch : lowered) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (const std::string& word : words) {
            const bool expected = lowered.find(word) != std::string::npos;
            differ += contains(text, word) != expected;
            found += expected;
        }
    }
    CHECK(differ == 0);
    CHECK(found > 100000);
    CHECK(contains("Optimizer.step#SGD.step", "optimizer"));
    CHECK(!contains("Optimize", "optimizer"));
    const std::string long_name(300, 'O');  // past the buffer: lowered in a string of its own
    CHECK(contains(long_name + "ptimizer", "optimizer"));
}
