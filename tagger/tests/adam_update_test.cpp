// The update's first kernel when it is also the first to touch the update's state in the step:
// PyTorch's foreach Adam (no fused kernel), as recorded on a real GPU without torch.profiler.
#include <doctest/doctest.h>

#include "iterations.h"
#include "rules.h"
#include "timed_work.h"

#include <map>
#include <string>

using namespace tbdprof::tagger;
using tbdprof::tagger::test::add_gemm;
using tbdprof::tagger::test::add_work;

namespace {

struct AdamRun {
    TraceModel model;
    std::map<std::string, int32_t> ids;
    int64_t now = 1000;

    void alloc(const std::string& name, int64_t bytes) {
        Allocation a;
        a.id = static_cast<int64_t>(model.allocations.size()) + 1;
        a.address = 0x10000 * uint64_t(a.id);
        a.bytes = bytes;
        a.alloc_ns = now++;
        ids[name] = static_cast<int32_t>(model.allocations.size());
        model.allocations.push_back(a);
    }
    void free(const std::string& name) { model.allocations[size_t(ids[name])].free_ns = now++; }
    // A kernel whose every operand is a writable word of a by-value struct (multi_tensor_apply, a
    // mangled name: written, maybe read first).
    size_t foreach_kernel(int32_t function, std::initializer_list<const char*> names) {
        std::vector<Touch> touches;
        for (const char* name : names) touches.push_back({ids[name], Access::Write});
        add_work(model, now, WorkItem::Kind::Kernel, function, touches);
        return model.work.size() - 1;
    }
};

}  // namespace

TEST_CASE("foreach Adam: the kernel folding the gradients into the first moments begins the update") {
    // Per step: forward (GEMM X.W -> A, a bias kernel), backward (dA, the weight gradient G by a
    // GEMM, the bias gradient gb reduced from dA by a kernel), then Adam in seven foreach kernels:
    // m.lerp_(g) (M, Mb, G, gb); v *= beta2 (V, Vb); v.addcmul_(g, g) (V, Vb, G, gb); d = sqrt(v)
    // (V, Vb, D, Db); d /= c2; d += eps; w.addcdiv_(m, d) (W, b, M, Mb, D, Db). Only the last writes
    // the weights. The first moments are first touched in the step by the update's first kernel,
    // which also reads the gradients: no buffer of the update's state is touched before it. The
    // second kernel's unused words still hold the first kernel's operands (stale words, as in the
    // H200 trace), so the window cannot begin there either. Moments are zeroed in the first step.
    AdamRun r;
    r.alloc("W", 4096);
    r.alloc("b", 64);
    r.alloc("X", 8192);
    add_work(r.model, r.now, WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    std::vector<size_t> first_update_kernels, reductions;
    for (int s = 0; s < 6; ++s) {
        r.now += 1000;
        add_work(r.model, r.now, WorkItem::Kind::CopyHtoD, -1, {{r.ids["X"], Access::Write}});
        r.alloc("A", 16384);
        add_gemm(r.model, r.now, r.ids["X"], r.ids["W"], r.ids["A"]);
        add_work(r.model, r.now, WorkItem::Kind::Kernel, 1, {{r.ids["b"], Access::Read}, {r.ids["A"], Access::Write}});
        r.alloc("dA", 16384);
        add_work(r.model, r.now, WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.alloc("G", 4096);
        add_gemm(r.model, r.now, r.ids["X"], r.ids["dA"], r.ids["G"]);
        r.alloc("gb", 64);
        reductions.push_back(r.foreach_kernel(3, {"dA", "gb"}));
        r.free("A");
        r.free("dA");
        if (s == 0) {
            for (const char* state : {"M", "Mb", "V", "Vb"}) {
                r.alloc(state, std::string(state).size() == 1 ? 4096 : 64);
                add_work(r.model, r.now, WorkItem::Kind::Set, -1, {{r.ids[state], Access::Write}});
            }
        }
        first_update_kernels.push_back(r.foreach_kernel(10, {"M", "Mb", "G", "gb"}));
        r.foreach_kernel(11, {"V", "Vb", "M", "Mb", "G", "gb"});  // the first kernel's operands: stale words
        r.foreach_kernel(12, {"V", "Vb", "G", "gb"});
        r.alloc("D", 4096);
        r.alloc("Db", 64);
        r.foreach_kernel(13, {"V", "Vb", "D", "Db"});
        r.foreach_kernel(14, {"D", "Db"});
        r.foreach_kernel(15, {"D", "Db"});
        r.foreach_kernel(16, {"W", "b", "M", "Mb", "D", "Db"});
        r.free("D");
        r.free("Db");
        r.free("G");
        r.free("gb");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_GE(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("W"), "weights");
    CHECK_EQ(category("b"), "weights");
    for (const char* state : {"M", "Mb", "V", "Vb"}) CHECK_EQ(category(state), "optimizer_state");
    CHECK_EQ(category("G"), "gradients");  // the last step's
    CHECK_EQ(category("gb"), "gradients");
    CHECK_EQ(category("dA"), "activations");
    // The steady steps' update begins at the moments' first kernel; the reduction stays backward's.
    for (size_t i = 1; i < first_update_kernels.size(); ++i) CHECK(result.optimizer_work[first_update_kernels[i]]);
    for (size_t k : reductions) CHECK_FALSE(result.optimizer_work[k]);
}

TEST_CASE("an embedding table its gather reads through a writable pointer before any GEMM is a weight") {
    // PyTorch's embedding forward (vectorized_gather_kernel(char* out, char* in, long* index, ...))
    // takes the table through a pointer not marked const, so its first use in each step looks like a
    // write. It makes a fresh buffer of the step (the embeddings, which an add reads next, not a
    // GEMM) from the table before the step's first product call; the update rewrites the table from its gradient GE,
    // which the embedding's backward makes anew each step. The table is a weight, not a gradient produced in the step.
    AdamRun r;
    r.alloc("E", 4096);
    r.alloc("W", 4096);
    r.alloc("T", 256);
    add_work(r.model, r.now, WorkItem::Kind::CopyHtoD, -1, {{r.ids["E"], Access::Write}});
    add_work(r.model, r.now, WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    for (int s = 0; s < 6; ++s) {
        r.now += 1000;
        add_work(r.model, r.now, WorkItem::Kind::CopyHtoD, -1, {{r.ids["T"], Access::Write}});
        r.alloc("H", 8192);
        r.foreach_kernel(1, {"H", "E", "T"});  // the gather: every pointer writable
        r.alloc("H2", 8192);                   // plus the positions' embeddings: no GEMM reads the gather's output
        add_work(r.model, r.now, WorkItem::Kind::Kernel, 4, {{r.ids["H"], Access::Read}, {r.ids["H2"], Access::Write}});
        r.alloc("A", 8192);
        add_gemm(r.model, r.now, r.ids["H2"], r.ids["W"], r.ids["A"]);
        r.alloc("dA", 8192);
        add_work(r.model, r.now, WorkItem::Kind::Kernel, 2, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.alloc("G", 4096);
        add_gemm(r.model, r.now, r.ids["H2"], r.ids["dA"], r.ids["G"]);
        r.alloc("dH", 8192);
        add_gemm(r.model, r.now, r.ids["dA"], r.ids["W"], r.ids["dH"]);
        r.alloc("GE", 4096);
        add_work(r.model, r.now, WorkItem::Kind::Kernel, 3,
                 {{r.ids["dH"], Access::Read}, {r.ids["T"], Access::Read}, {r.ids["GE"], Access::Write}});
        for (const char* done : {"H", "H2", "A", "dA", "dH"}) r.free(done);
        r.foreach_kernel(10, {"E", "W", "GE", "G"});  // SGD: param -= lr * grad
        r.free("G");
        r.free("GE");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_GE(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    auto category = [&](const char* name) { return result.tags[size_t(r.ids[name])].category; };
    CHECK_EQ(category("W"), "weights");
    CHECK_EQ(category("E"), "weights");
    CHECK_EQ(category("GE"), "gradients");  // the last step's
    CHECK_EQ(category("G"), "gradients");
}
