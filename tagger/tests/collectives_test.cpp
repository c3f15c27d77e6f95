// Collectives' operand roles (tagger/collectives.h) on made-up data-parallel runs whose answer is
// known: ZeRO-like (a gradient bucket reduce-scattered into the shard the update reads, the updated
// weights all-gathered in place), FSDP-like (the parameters all-gathered from a shard into a buffer of
// the step, the gradients reduce-scattered into a shard) and a reduction that carries no gradient.
#include <doctest/doctest.h>

#include "collectives.h"
#include "iterations.h"
#include "rules.h"
#include "timed_work.h"

#include <map>
#include <string>

using namespace tbdprof::tagger;

namespace {

struct Run {
    TraceModel model;
    std::map<std::string, int32_t> ids;
    int64_t now = 1000;

    int32_t alloc(const std::string& name, int64_t bytes) {
        Allocation a;
        a.id = static_cast<int64_t>(model.allocations.size()) + 1;
        a.address = 0x100000 * uint64_t(a.id);
        a.bytes = bytes;
        a.alloc_ns = now++;
        ids[name] = static_cast<int32_t>(model.allocations.size());
        model.allocations.push_back(a);
        return ids[name];
    }
    void free(const std::string& name) { model.allocations[size_t(ids[name])].free_ns = now++; }
    void kernel(int32_t function, std::vector<Touch> touches) {
        test::add_work(model, now, WorkItem::Kind::Kernel, function, std::move(touches));
    }
    void copy_in(const std::string& name) {
        test::add_work(model, now, WorkItem::Kind::CopyHtoD, -1, {{ids[name], Access::Write}});
    }
    void gemm(const std::string& a, const std::string& b, const std::string& c) {
        test::add_gemm(model, now, ids[a], ids[b], ids[c]);
    }
    // An NCCL call as the trace gives it: the send buffer is operand a, the receive buffer operand c
    // (the same allocation for an in-place call). Returns its work item's index.
    size_t collective(Collective kind, const std::string& send, const std::string& receive) {
        LibraryCall call;
        call.a = ids[send];
        call.c = ids[receive];
        call.collective = kind;
        model.library_calls.push_back(call);
        WorkItem w = test::timed_work(WorkItem::Kind::Kernel, 300 + int32_t(kind), now);
        w.library_call = static_cast<int32_t>(model.library_calls.size() - 1);
        w.touches = {{call.a, Access::Read}, {call.c, Access::Write}};
        model.work.push_back(std::move(w));
        return model.work.size() - 1;
    }
};

std::string category(const Run& r, const TagResult& result, const char* name) {
    return result.tags[size_t(r.ids.at(name))].category;
}

}  // namespace

TEST_CASE("ZeRO-like: the reduce-scattered bucket and its shard are gradients, the reduce-scatter is no update") {
    // W: every parameter (one arena); G: the gradient bucket backward writes; S: this rank's shard of
    // the summed gradients; M: momentum of the shard. Each step: batch in, forward, backward, the
    // bucket reduce-scattered into S, the update of this rank's part of W from S and M, W all-gathered
    // in place (send and receive buffers inside W).
    Run r;
    for (const char* name : {"W", "G", "S", "M", "X"}) r.alloc(name, 4096);
    r.kernel(1, {{r.ids["W"], Access::Write}});
    r.kernel(2, {{r.ids["M"], Access::Write}});
    std::vector<size_t> reduce_scatters;
    for (int step = 0; step < 5; ++step) {
        r.now += 1000;
        r.copy_in("X");
        r.alloc("A", 8192);
        r.gemm("X", "W", "A");
        r.alloc("dA", 8192);
        r.kernel(3, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.gemm("X", "dA", "G");
        reduce_scatters.push_back(r.collective(Collective::Reduction, "G", "S"));
        r.kernel(4, {{r.ids["W"], Access::Write}, {r.ids["S"], Access::Read}, {r.ids["M"], Access::Write}});
        r.collective(Collective::Gather, "W", "W");
        r.free("A");
        r.free("dA");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(category(r, result, "W"), "weights");
    CHECK_EQ(category(r, result, "G"), "gradients");
    CHECK_EQ(result.tags[size_t(r.ids["G"])].rule, "reduced-into-gradients");
    CHECK_EQ(category(r, result, "S"), "gradients");
    CHECK_EQ(category(r, result, "M"), "optimizer_state");
    CHECK_EQ(category(r, result, "X"), "input");
    for (size_t w : reduce_scatters) CHECK_FALSE(result.optimizer_work[w]);
}

TEST_CASE("FSDP-like: the parameters gathered for the step are weights, the gradients scattered into a shard too") {
    // P: this rank's shard of the parameters (updated by it); F: the full parameters, gathered from
    // every rank's shard at the start of each step and freed at its end; G: the full gradients, made
    // in the step; S: their shard; M: the shard's momentum.
    Run r;
    for (const char* name : {"P", "S", "M", "X"}) r.alloc(name, 4096);
    r.kernel(1, {{r.ids["P"], Access::Write}});
    r.kernel(2, {{r.ids["M"], Access::Write}});
    for (int step = 0; step < 5; ++step) {
        r.now += 1000;
        r.copy_in("X");
        r.alloc("F", 8192);
        r.collective(Collective::Gather, "P", "F");
        r.alloc("A", 8192);
        r.gemm("X", "F", "A");
        r.alloc("dA", 8192);
        r.kernel(3, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.alloc("G", 8192);
        r.gemm("X", "dA", "G");
        r.collective(Collective::Reduction, "G", "S");
        r.kernel(4, {{r.ids["P"], Access::Write}, {r.ids["S"], Access::Read}, {r.ids["M"], Access::Write}});
        for (const char* name : {"A", "dA", "G", "F"}) r.free(name);
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(category(r, result, "P"), "weights");
    CHECK_EQ(category(r, result, "F"), "weights");  // the last step's F (earlier ones were renamed)
    CHECK_EQ(result.tags[size_t(r.ids["F"])].rule, "gathered-weights");
    CHECK_EQ(category(r, result, "G"), "gradients");
    CHECK_EQ(category(r, result, "S"), "gradients");
    CHECK_EQ(category(r, result, "M"), "optimizer_state");
    CHECK_EQ(category(r, result, "A"), "activations");
}

TEST_CASE("a reduction whose result is no gradient says nothing of its input") {
    // The loss L, all-reduced into R and read back to the host for logging: neither is a gradient.
    Run r;
    for (const char* name : {"W", "G", "L", "R", "X"}) r.alloc(name, 4096);
    r.kernel(1, {{r.ids["W"], Access::Write}});
    for (int step = 0; step < 5; ++step) {
        r.now += 1000;
        r.copy_in("X");
        r.alloc("A", 8192);
        r.gemm("X", "W", "A");
        r.kernel(5, {{r.ids["A"], Access::Read}, {r.ids["L"], Access::Write}});
        r.collective(Collective::Reduction, "L", "R");
        test::add_work(r.model, r.now, WorkItem::Kind::CopyDtoH, -1, {{r.ids["R"], Access::Read}});
        r.gemm("X", "A", "G");
        r.kernel(4, {{r.ids["W"], Access::Write}, {r.ids["G"], Access::Read}});
        r.free("A");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(category(r, result, "W"), "weights");
    CHECK_EQ(category(r, result, "G"), "gradients");
    CHECK_NE(category(r, result, "L"), "gradients");
    CHECK_NE(category(r, result, "R"), "gradients");
}

TEST_CASE("DDP-like: a bucket filled by copies of gradients, reduced in place and copied back, is gradients") {
    // W: the parameters; Gw: the weight gradient backward makes in each step (a fresh .grad); B: the
    // bucket, persistent, filled by a copy of Gw, all-reduced in place, then copied into Gr (the
    // .grad the update reads; the caching allocator's next tensor at that place); M: momentum; L: the
    // loss, all-reduced in place for logging and read back to the host.
    Run r;
    for (const char* name : {"W", "B", "M", "L", "X"}) r.alloc(name, 4096);
    r.kernel(1, {{r.ids["W"], Access::Write}});
    r.kernel(2, {{r.ids["M"], Access::Write}});
    for (int step = 0; step < 5; ++step) {
        r.now += 1000;
        r.copy_in("X");
        r.alloc("A", 8192);
        r.gemm("X", "W", "A");
        r.kernel(5, {{r.ids["A"], Access::Read}, {r.ids["L"], Access::Write}});
        r.collective(Collective::Reduction, "L", "L");
        test::add_work(r.model, r.now, WorkItem::Kind::CopyDtoH, -1, {{r.ids["L"], Access::Read}});
        r.alloc("dA", 8192);
        r.kernel(3, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.alloc("Gw", 4096);
        r.gemm("X", "dA", "Gw");
        test::add_work(r.model, r.now, WorkItem::Kind::CopyDtoD, -1,
                       {{r.ids["Gw"], Access::Read}, {r.ids["B"], Access::Write}});
        r.collective(Collective::Reduction, "B", "B");
        r.alloc("Gr", 4096);
        test::add_work(r.model, r.now, WorkItem::Kind::CopyDtoD, -1,
                       {{r.ids["B"], Access::Read}, {r.ids["Gr"], Access::Write}});
        r.kernel(4, {{r.ids["W"], Access::Write}, {r.ids["Gr"], Access::Read}, {r.ids["M"], Access::Write}});
        for (const char* name : {"A", "dA", "Gw", "Gr"}) r.free(name);
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(category(r, result, "W"), "weights");
    CHECK_EQ(category(r, result, "B"), "gradients");
    CHECK_EQ(result.tags[size_t(r.ids["B"])].rule, "reduced-gradient-bucket");
    CHECK_EQ(category(r, result, "Gr"), "gradients");  // the last step's (earlier ones were renamed)
    CHECK_EQ(category(r, result, "Gw"), "gradients");
    CHECK_EQ(category(r, result, "M"), "optimizer_state");
    CHECK_NE(category(r, result, "L"), "gradients");  // reduced in place, but read back, not by the update
}

TEST_CASE("DDP-like with gradients as bucket views: backward writes the bucket, the update reads it") {
    Run r;
    for (const char* name : {"W", "B", "M", "X"}) r.alloc(name, 4096);
    r.kernel(1, {{r.ids["W"], Access::Write}});
    r.kernel(2, {{r.ids["M"], Access::Write}});
    for (int step = 0; step < 5; ++step) {
        r.now += 1000;
        r.copy_in("X");
        r.alloc("A", 8192);
        r.gemm("X", "W", "A");
        r.alloc("dA", 8192);
        r.kernel(3, {{r.ids["A"], Access::Read}, {r.ids["dA"], Access::Write}});
        r.gemm("X", "dA", "B");
        r.collective(Collective::Reduction, "B", "B");
        r.kernel(4, {{r.ids["W"], Access::Write}, {r.ids["B"], Access::Read}, {r.ids["M"], Access::Write}});
        r.free("A");
        r.free("dA");
    }
    IterationSet its = detect_iterations(r.model, "");
    REQUIRE_EQ(its.iterations.size(), 5u);
    TagResult result = tag_allocations(r.model, its);
    CHECK_EQ(category(r, result, "W"), "weights");
    CHECK_EQ(category(r, result, "B"), "gradients");
    CHECK_EQ(category(r, result, "M"), "optimizer_state");
}

TEST_CASE("NCCL library ops map to collective kinds") {
    CHECK_EQ(collective_of("nccl_all_reduce"), Collective::Reduction);
    CHECK_EQ(collective_of("nccl_reduce_scatter"), Collective::Reduction);
    CHECK_EQ(collective_of("nccl_reduce"), Collective::Reduction);
    CHECK_EQ(collective_of("nccl_all_gather"), Collective::Gather);
    CHECK_EQ(collective_of("nccl_broadcast"), Collective::Gather);
    CHECK_EQ(collective_of("nccl_send"), Collective::Other);
    CHECK_EQ(collective_of("nccl_group_end"), Collective::Other);
    CHECK_EQ(collective_of("gemm"), Collective::None);
}

TEST_CASE("the kernel of a group of NCCL calls reads what they send and overwrites what they receive") {
    // Its own call (ncclGroupEnd) has no operands; loading gives the kernel the touches of the group's
    // sends and receives. The received buffer is made anew by it (not a value carried in), the sent one
    // read.
    Run r;
    r.alloc("sent", 4096);
    r.alloc("received", 4096);
    LibraryCall group_end;
    group_end.collective = Collective::Other;
    r.model.library_calls.push_back(group_end);
    WorkItem w = test::timed_work(WorkItem::Kind::Kernel, 400, r.now);
    w.library_call = 0;
    w.touches = {{r.ids["sent"], Access::Read}, {r.ids["received"], Access::Write}};
    CHECK_EQ(use_of(r.model, w, w.touches[0]), Use::Read);
    CHECK_EQ(use_of(r.model, w, w.touches[1]), Use::Overwrite);
    // A call with operands keeps its roles: a send (operand a) is read.
    LibraryCall send;
    send.a = r.ids["sent"];
    send.collective = Collective::Other;
    r.model.library_calls.push_back(send);
    w.library_call = 1;
    CHECK_EQ(use_of(r.model, w, w.touches[0]), Use::Read);
    CHECK_EQ(use_of(r.model, w, w.touches[1]), Use::Read);
}
