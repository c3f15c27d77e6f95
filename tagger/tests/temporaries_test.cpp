// Temporaries of one operation that several of its kernels and library calls share, in a made-up
// eager run (one stream-ordered allocation per tensor, freed as soon as it is dead; kernels take
// their pointers inside a struct, so the trace knows no access of theirs): packed copies made for a
// GEMM, the GEMM's result unpacked into the operation's output, partial sums reduced in the same
// operation. Beside them, buffers with the same local shape that carry data between operations: a
// GEMM's result that one elementwise kernel consumes and frees, and an output handed to the next
// operation by two adjacent kernels.
#include <doctest/doctest.h>

#include "iterations.h"
#include "rules.h"
#include "timed_work.h"

#include <map>
#include <string>
#include <vector>

using namespace tbdprof::tagger;

namespace {

struct Eager {
    TraceModel model;
    std::map<std::string, int32_t> live;                // name -> allocation index of its current instance
    std::map<std::string, std::vector<int32_t>> every;  // name -> every instance, in order
    int64_t now = 1000;

    void alloc(const std::string& name, int64_t bytes = 65536) {
        Allocation a;
        a.id = static_cast<int64_t>(model.allocations.size()) + 1;
        a.address = 0x100000 * uint64_t(a.id);
        a.bytes = bytes;
        a.alloc_ns = now++;
        live[name] = static_cast<int32_t>(model.allocations.size());
        every[name].push_back(live[name]);
        model.allocations.push_back(a);
    }
    void free(const std::string& name) { model.allocations[size_t(live.at(name))].free_ns = now++; }
    Touch u(const std::string& n) { return {live.at(n), Access::Unknown}; }
    Touch r(const std::string& n) { return {live.at(n), Access::Read}; }
    Touch w(const std::string& n) { return {live.at(n), Access::Write}; }
    void kernel(int32_t function, std::vector<Touch> touches) {
        test::add_work(model, now, WorkItem::Kind::Kernel, function, std::move(touches));
    }
    void copy_in(const std::string& n) { test::add_work(model, now, WorkItem::Kind::CopyHtoD, -1, {w(n)}); }
    void gemm(const std::string& a, const std::string& b, const std::string& c) {
        test::add_gemm(model, now, live.at(a), live.at(b), live.at(c));
    }
    // The category of `name`'s instance made in step `step` (one instance per step).
    std::string category(const TagResult& t, const std::string& name, size_t step) {
        return t.tags[size_t(every.at(name).at(step))].category;
    }
};

// One training step of a small model: a linear layer, an attention-like operation with packed
// temporaries, a loss, and backward with a GEMM result consumed by one elementwise kernel and a
// normalisation-like backward whose partial sums are reduced right away.
void step(Eager& e) {
    e.alloc("x", 4096);
    e.copy_in("x");
    // linear: h = W1 x
    e.alloc("h");
    e.gemm("W1", "x", "h");
    // attention-like: q, k packed copies of h for one GEMM; its result unpacked into ctx
    e.alloc("q");
    e.kernel(1, {e.u("h"), e.u("q")});
    e.alloc("k");
    e.kernel(1, {e.u("h"), e.u("k")});
    e.alloc("scores");
    e.gemm("q", "k", "scores");
    e.free("q"), e.free("k");
    e.alloc("ctx");
    e.alloc("stats", 1024);  // kept for backward
    e.kernel(2, {e.u("scores"), e.u("ctx"), e.u("stats")});
    e.free("scores");
    // a projection (W3 frozen), a residual add, then pooling: z is passed on by two adjacent kernels
    // and outlives proj, which its maker read
    e.alloc("proj");
    e.gemm("W3", "ctx", "proj");
    e.alloc("z");
    e.kernel(3, {e.u("h"), e.u("proj"), e.u("z")});
    e.free("proj");
    e.alloc("pooled", 4096);
    e.kernel(4, {e.u("z"), e.u("pooled")});
    e.free("z");
    // loss: per-sample losses summed right away
    e.alloc("dpooled", 4096);
    e.alloc("losses", 256);
    e.kernel(5, {e.u("pooled"), e.u("losses"), e.u("dpooled")});
    e.kernel(6, {e.u("losses"), e.u("total")});
    e.free("losses");
    // backward of a linear layer: e_ = W2 dpooled, consumed by one elementwise kernel and freed
    e.alloc("dW2", 4096);
    e.gemm("dpooled", "pooled", "dW2");
    e.alloc("dz");
    e.gemm("W2", "dpooled", "dz");
    e.free("dpooled"), e.free("pooled");
    e.alloc("dh");
    e.kernel(7, {e.u("ctx"), e.u("stats"), e.u("dz"), e.u("dh")});
    e.free("dz"), e.free("stats"), e.free("ctx");
    // normalisation-like backward: dx, and two partial sums reduced at once into gradients
    e.alloc("dx");
    e.alloc("partial_a", 2048);
    e.alloc("partial_b", 2048);
    e.kernel(8, {e.u("dh"), e.u("h"), e.r("g"), e.u("dx"), e.u("partial_a"), e.u("partial_b")});
    e.alloc("dg", 256);
    e.kernel(9, {e.u("partial_a"), e.u("dg")});
    e.alloc("db", 256);
    e.kernel(9, {e.u("partial_b"), e.u("db")});
    e.free("partial_b"), e.free("partial_a"), e.free("dh"), e.free("h");
    e.alloc("dW1", 4096);
    e.gemm("dx", "x", "dW1");
    e.free("dx"), e.free("x");
    // update
    e.kernel(10, {e.w("W1"), e.r("dW1"), e.w("m1")});
    e.kernel(10, {e.w("W2"), e.r("dW2"), e.w("m2")});
    e.kernel(10, {e.w("g"), e.r("dg"), e.w("mg")});
    e.kernel(10, {e.w("b"), e.r("db"), e.w("mb")});
    e.free("dW1"), e.free("dW2"), e.free("dg"), e.free("db");
}

// A validation pass after the last step: forward only, nothing kept.
void validation_pass(Eager& e) {
    e.alloc("vx", 4096);
    e.copy_in("vx");
    e.alloc("vh");
    e.gemm("W1", "vx", "vh");
    e.alloc("vq");
    e.kernel(1, {e.u("vh"), e.u("vq")});
    e.alloc("vk");
    e.kernel(1, {e.u("vh"), e.u("vk")});
    e.alloc("vscores");
    e.gemm("vq", "vk", "vscores");
    e.free("vq"), e.free("vk");
    e.alloc("vctx");
    e.kernel(2, {e.u("vscores"), e.u("vctx")});
    e.free("vscores");
    e.alloc("vproj");
    e.gemm("W3", "vctx", "vproj");
    e.free("vctx");
    e.alloc("vz");
    e.kernel(3, {e.u("vh"), e.u("vproj"), e.u("vz")});
    e.free("vproj"), e.free("vh"), e.free("vx");
    e.kernel(6, {e.u("vz"), e.u("total")});
    e.free("vz");
}

}  // namespace

TEST_CASE("an eager run: temporaries one operation shares, beside look-alikes that carry data on") {
    Eager e;
    e.model.has_argument_info = true;
    for (const char* n : {"W1", "W2", "W3", "g", "b", "m1", "m2", "mg", "mb"}) e.alloc(n, 4096);
    e.alloc("total", 4);
    for (const char* n : {"W1", "W2", "W3", "g", "b"}) e.copy_in(n);
    e.kernel(11, {e.r("g"), e.w("b")});  // a forward use of the normalisation's parameters
    constexpr size_t kSteps = 5;
    for (size_t s = 0; s < kSteps; ++s) {
        int64_t begin = e.now;
        step(e);
        e.model.ranges.push_back({0, begin, e.now, "step " + std::to_string(s)});
        e.now += 5;
    }
    validation_pass(e);
    IterationSet its = detect_iterations(e.model, "");
    REQUIRE(its.iterations.size() == kSteps);
    TagResult t = tag_allocations(e.model, its);
    for (size_t s = 1; s < kSteps; ++s) {
        CAPTURE(s);
        // Private to one operation.
        CHECK_EQ(e.category(t, "q", s), "workspace");  // packed copies only the GEMM reads
        CHECK_EQ(e.category(t, "k", s), "workspace");
        CHECK_EQ(e.category(t, "scores", s), "workspace");  // made from them, unpacked at once
        CHECK_EQ(e.category(t, "partial_a", s), "workspace");
        CHECK_EQ(e.category(t, "partial_b", s), "workspace");  // one kernel more before its reduction
        CHECK_EQ(e.category(t, "losses", s), "workspace");
        // Carried between operations, though their local shape is the same.
        CHECK_EQ(e.category(t, "ctx", s), "activations");    // the operation's output, kept for backward
        CHECK_EQ(e.category(t, "stats", s), "activations");  // made beside a temporary, read in backward
        CHECK_EQ(e.category(t, "z", s), "activations");      // outlives the input its maker read
        CHECK_EQ(e.category(t, "proj", s), "activations");
        CHECK_EQ(e.category(t, "dz", s), "activations");  // a GEMM result one elementwise kernel consumes
        CHECK_EQ(e.category(t, "dh", s), "activations");
        CHECK_EQ(e.category(t, "dx", s), "activations");  // made beside the partial sums, read by the next op
        CHECK_EQ(e.category(t, "h", s), "activations");
        CHECK_EQ(e.category(t, "dW1", s), "gradients");
        CHECK_EQ(e.category(t, "dg", s), "gradients");
    }
    // After the last step, the same operations make the same kinds of buffers.
    CHECK_EQ(e.category(t, "vq", 0), "workspace");
    CHECK_EQ(e.category(t, "vscores", 0), "workspace");
    CHECK_EQ(e.category(t, "vh", 0), "activations");
    CHECK_EQ(e.category(t, "vctx", 0), "activations");  // made from a temporary gone at once: no packed copy
    CHECK_EQ(e.category(t, "vproj", 0), "activations");
}
