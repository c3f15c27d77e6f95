// Roles from data flow on made-up runs in the styles lifetimes get wrong: memory planned once (every
// buffer lives the whole run), an Adam built from generic scale/add kernels, FP32 master copies of
// BF16 weights, an im2col buffer refilled for every GEMM, and a fused update over whole arenas.
#include <doctest/doctest.h>

#include "iterations.h"
#include "pool_tagging.h"
#include "rules.h"
#include "timed_work.h"

#include <map>

using namespace tbdprof::tagger;

namespace {

// Every buffer allocated before the first step and never freed (static memory planning).
struct Planned {
    TraceModel model;
    std::map<std::string, int32_t> ids;
    int64_t now = 1000;

    int32_t alloc(const std::string& name, int64_t bytes = 4096) {
        Allocation a;
        a.id = static_cast<int64_t>(model.allocations.size()) + 1;
        a.address = 0x100000 * uint64_t(a.id);
        a.bytes = bytes;
        a.alloc_ns = now++;
        ids[name] = static_cast<int32_t>(model.allocations.size());
        model.allocations.push_back(a);
        return ids[name];
    }
    Touch r(const std::string& n) { return {ids.at(n), Access::Read}; }
    Touch w(const std::string& n) { return {ids.at(n), Access::Write}; }
    void kernel(int32_t function, std::vector<Touch> touches) {
        test::add_work(model, now, WorkItem::Kind::Kernel, function, std::move(touches));
    }
    void zero(const std::string& n) { test::add_work(model, now, WorkItem::Kind::Set, -1, {w(n)}); }
    void copy_in(const std::string& n) { test::add_work(model, now, WorkItem::Kind::CopyHtoD, -1, {w(n)}); }
    void gemm(const std::string& a, const std::string& b, const std::string& c) {
        test::add_gemm(model, now, ids.at(a), ids.at(b), ids.at(c));
    }
    std::string category(const TagResult& t, const std::string& n) { return t.tags[size_t(ids.at(n))].category; }
};

}  // namespace

TEST_CASE("memory planned once: persistent activations, an im2col scratch, Adam from generic kernels") {
    Planned p;
    for (const char* n : {"x", "col", "W", "b", "y", "h", "dh", "dy", "dW", "db", "m", "v", "t"}) p.alloc(n);
    p.copy_in("W");
    p.kernel(90, {p.w("m"), p.w("v")});  // zero the moments
    for (int s = 0; s < 5; ++s) {
        p.copy_in("x");
        p.zero("db");                              // gradients cleared each step
        for (int image = 0; image < 3; ++image) {  // im2col + one GEMM per image, the same scratch
            p.kernel(1, {p.r("x"), p.w("col")});
            p.gemm("col", "W", "y");
        }
        p.kernel(2, {p.r("y"), p.r("b"), p.w("h")});    // bias + activation
        p.kernel(3, {p.r("h"), p.w("dh")});             // loss gradient
        p.kernel(4, {p.r("dh"), p.r("y"), p.w("dy")});  // activation backward
        for (int image = 0; image < 3; ++image) {
            p.kernel(1, {p.r("x"), p.w("col")});
            p.gemm("dy", "col", "dW");
        }
        p.kernel(5, {p.r("dy"), p.w("db")});  // bias gradient
        // Adam from generic kernels: scale, axpy, square, the update.
        p.kernel(6, {p.w("m")});
        p.kernel(7, {p.r("dW"), p.w("m")});
        p.kernel(6, {p.w("v")});
        p.kernel(8, {p.r("dW"), p.w("t")});
        p.kernel(7, {p.r("t"), p.w("v")});
        p.kernel(9, {p.r("m"), p.r("v"), p.w("W")});
        p.kernel(10, {p.r("db"), p.w("b")});
        p.now += 500;
    }
    IterationSet its = detect_iterations(p.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult t = tag_allocations(p.model, its);
    CHECK_EQ(p.category(t, "x"), "input");
    CHECK_EQ(p.category(t, "W"), "weights");
    CHECK_EQ(p.category(t, "b"), "weights");
    CHECK_EQ(p.category(t, "col"), "workspace");
    for (const char* n : {"y", "h", "dh", "dy"}) CHECK_MESSAGE(p.category(t, n) == "activations", n);
    CHECK_EQ(p.category(t, "dW"), "gradients");
    CHECK_EQ(p.category(t, "db"), "gradients");
    CHECK_EQ(p.category(t, "m"), "optimizer_state");
    CHECK_EQ(p.category(t, "v"), "optimizer_state");
    CHECK_EQ(p.category(t, "t"), "optimizer_state");  // the update's own scratch, planned once
    for (const Tag& tag : t.tags) CHECK_FALSE(tag.evidence.empty());
    REQUIRE_EQ(t.phases.size(), 15u);
}

TEST_CASE("BF16 weights with an FP32 master copy and momentum kept in the gradient buffer") {
    Planned p;
    for (const char* n : {"x", "w16", "master", "y", "g", "m"}) p.alloc(n);
    p.copy_in("master");
    p.kernel(1, {p.r("master"), p.w("w16")});
    for (int s = 0; s < 4; ++s) {
        p.copy_in("x");
        p.gemm("x", "w16", "y");
        p.kernel(2, {p.w("y")});                           // in place
        p.gemm("y", "x", "g");                             // the gradient GEMM keeps momentum (beta > 0)
        p.kernel(3, {p.r("g"), p.w("m"), p.w("master")});  // update the master copy
        p.kernel(1, {p.r("master"), p.w("w16")});          // and cast it to the BF16 weights
        p.now += 500;
    }
    IterationSet its = detect_iterations(p.model, "");
    REQUIRE_EQ(its.iterations.size(), 4u);
    TagResult t = tag_allocations(p.model, its);
    CHECK_EQ(p.category(t, "w16"), "weights");
    CHECK_EQ(p.category(t, "master"), "optimizer_state");
    CHECK_EQ(p.category(t, "m"), "optimizer_state");
    CHECK_EQ(p.category(t, "g"), "gradients");
    CHECK_MESSAGE(p.category(t, "y") == "activations", t.tags[size_t(p.ids["y"])].rule);
}
