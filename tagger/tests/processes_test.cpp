// Multi-process runs on made-up models: two ranks running the same training loop, their work
// interleaved in time, each get their own steps and tags; a process's part of the model keeps its
// indices straight; a single process is tagged as before.
#include <doctest/doctest.h>

#include "pool_tagging.h"
#include "processes.h"
#include "timed_work.h"

#include <algorithm>
#include <map>
#include <string>

using namespace tbdprof::tagger;

namespace {

// One rank's training loop (SGD with momentum): weights W, gradient G (zeroed each step, written by
// a GEMM), momentum M, per-step input X (copied in), activations A and dA (per step), a workspace.
struct Rank {
    TraceModel model;
    std::map<std::string, int32_t> ids;
    int64_t now;
    int32_t process;

    Rank(int32_t p, int64_t start) : now(start), process(p) {}
    void alloc(const std::string& name, int64_t bytes) {
        Allocation a;
        a.process = process;
        a.address = 0x10000 * uint64_t(model.allocations.size() + 1);
        a.bytes = bytes;
        a.alloc_ns = now++;
        ids[name] = static_cast<int32_t>(model.allocations.size());
        model.allocations.push_back(a);
    }
    void free(const std::string& name) { model.allocations[size_t(ids[name])].free_ns = now++; }
    void work(WorkItem::Kind kind, int32_t function, std::vector<Touch> touches, int32_t call = kNone) {
        WorkItem w = test::timed_work(kind, function, now);
        w.process = process;
        w.library_call = call;
        w.touches = std::move(touches);
        model.work.push_back(std::move(w));
    }
    void gemm(int32_t function, const std::string& a, const std::string& b, const std::string& c) {
        LibraryCall call;
        call.process = process;
        call.begin_ns = now;
        call.end_ns = now + 1;
        call.a = ids[a], call.b = ids[b], call.c = ids[c], call.workspace = ids["ws"];
        model.library_calls.push_back(call);
        work(WorkItem::Kind::Kernel, function,
             {{call.a, Access::Read}, {call.b, Access::Read}, {call.c, Access::Write}, {call.workspace, Access::Write}},
             static_cast<int32_t>(model.library_calls.size() - 1));
    }
    void step(bool first) {
        now += 1000;
        work(WorkItem::Kind::CopyHtoD, -1, {{ids["X"], Access::Write}});
        work(WorkItem::Kind::Set, -1, {{ids["G"], Access::Write}});
        alloc("A", 16384);
        gemm(100, "X", "W", "A");
        alloc("dA", 16384);
        work(WorkItem::Kind::Kernel, 2, {{ids["A"], Access::Read}, {ids["dA"], Access::Write}});
        gemm(101, "X", "dA", "G");
        if (first) alloc("M", 4096);
        work(WorkItem::Kind::Kernel, 4,
             {{ids["W"], Access::Write}, {ids["G"], Access::Read}, {ids["M"], Access::Write}});
        free("A");
        free("dA");
    }
};

Rank rank_run(int32_t process, int64_t start, int steps) {
    Rank r(process, start);
    r.alloc("ws", 1 << 20);
    r.alloc("W", 4096);
    r.alloc("G", 4096);
    r.alloc("X", 8192);
    r.work(WorkItem::Kind::CopyHtoD, -1, {{r.ids["W"], Access::Write}});
    for (int s = 0; s < steps; ++s) r.step(s == 0);
    return r;
}

// The two ranks' models as one trace's: allocations, calls and work of the second renumbered after
// the first's, work and calls in time order (the ranks' launches interleave).
TraceModel joined(const Rank& a, Rank& b, std::map<std::string, int32_t>& b_ids) {
    TraceModel m = a.model;
    const auto allocation_base = static_cast<int32_t>(m.allocations.size());
    const auto call_base = static_cast<int32_t>(m.library_calls.size());
    for (Allocation alloc : b.model.allocations) m.allocations.push_back(alloc);
    for (LibraryCall call : b.model.library_calls) {
        call.a += allocation_base, call.b += allocation_base, call.c += allocation_base;
        call.workspace += allocation_base;
        m.library_calls.push_back(call);
    }
    for (WorkItem w : b.model.work) {
        for (Touch& t : w.touches) t.allocation += allocation_base;
        if (w.library_call != kNone) w.library_call += call_base;
        m.work.push_back(w);
    }
    for (auto& [name, id] : b.ids) b_ids[name] = id + allocation_base;
    // Calls by begin time, as load_model keeps them; work by launch, its call indices following.
    std::vector<int32_t> order(m.library_calls.size()), position(order.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
        return m.library_calls[size_t(x)].begin_ns < m.library_calls[size_t(y)].begin_ns;
    });
    std::vector<LibraryCall> calls;
    for (size_t i = 0; i < order.size(); ++i)
        position[size_t(order[i])] = static_cast<int32_t>(i), calls.push_back(m.library_calls[size_t(order[i])]);
    m.library_calls = calls;
    for (WorkItem& w : m.work)
        if (w.library_call != kNone) w.library_call = position[size_t(w.library_call)];
    std::stable_sort(m.work.begin(), m.work.end(),
                     [](const WorkItem& x, const WorkItem& y) { return x.launch_ns < y.launch_ns; });
    for (size_t i = 0; i < m.allocations.size(); ++i) m.allocations[i].id = int64_t(i) + 1;
    return m;
}

size_t steps_of(const std::vector<Iteration>& spans, int32_t process) {
    return size_t(
        std::count_if(spans.begin(), spans.end(), [&](const Iteration& it) { return it.process == process; }));
}

}  // namespace

TEST_CASE("two ranks whose work interleaves each get their own steps and tags") {
    Rank first = rank_run(1, 1000, 5);
    Rank second = rank_run(2, 1007, 5);  // 7 ns later: every launch of one rank between two of the other
    std::map<std::string, int32_t> second_ids;
    const TraceModel m = joined(first, second, second_ids);
    IterationSet its;
    const TagResult result = tag_each_process(m, "", its);
    CHECK_EQ(its.source, "repetition");
    CHECK_EQ(steps_of(its.iterations, 1), 5u);
    CHECK_EQ(steps_of(its.iterations, 2), 5u);
    CHECK(its.non_training.empty());
    // Grouped by process, each process's in time order.
    for (size_t i = 1; i < its.iterations.size(); ++i)
        if (its.iterations[i].process == its.iterations[i - 1].process)
            CHECK_LT(its.iterations[i - 1].begin_ns, its.iterations[i].begin_ns);
    REQUIRE_EQ(result.tags.size(), m.allocations.size());
    for (const auto* ids : {&first.ids, &second_ids}) {
        auto category = [&](const char* name) { return result.tags[size_t(ids->at(name))].category; };
        CHECK_EQ(category("W"), "weights");
        CHECK_EQ(category("G"), "gradients");
        CHECK_EQ(category("M"), "optimizer_state");
        CHECK_EQ(category("X"), "input");
        CHECK_EQ(category("ws"), "workspace");
        CHECK_EQ(category("A"), "activations");
    }
    // Phases refer to the joined iterations: each phase lies in the step of its index, of either process.
    REQUIRE_FALSE(result.phases.empty());
    for (const Phase& phase : result.phases) {
        REQUIRE_LT(phase.iteration, its.iterations.size());
        const Iteration& step = its.iterations[phase.iteration];
        CHECK_GE(phase.begin_ns, step.begin_ns);
        CHECK_LE(phase.end_ns, std::max(step.end_ns, step.device_end_ns));
        // Its device span is that of its own process's work launched in it (the other rank's work
        // launched between is not its).
        int64_t device_begin = INT64_MAX, device_end = 0;
        for (const WorkItem& w : m.work)
            if (w.process == step.process && w.launch_ns >= phase.begin_ns && w.launch_ns < phase.end_ns)
                device_begin = std::min(device_begin, w.start_ns), device_end = std::max(device_end, w.end_ns);
        REQUIRE_GT(device_end, 0);
        CHECK_EQ(phase.device_begin_ns, device_begin);
        CHECK_EQ(phase.device_end_ns, device_end);
    }
    // The update kernels of both ranks are the optimizer's.
    size_t updates = 0;
    for (size_t w = 0; w < m.work.size(); ++w) updates += result.optimizer_work[w] && m.work[w].function == 4;
    CHECK_EQ(updates, 10u);
}

TEST_CASE("a process's part of the model: its own entries, renumbered, mapped back") {
    Rank first = rank_run(1, 1000, 3);
    Rank second = rank_run(2, 1007, 3);
    std::map<std::string, int32_t> second_ids;
    TraceModel m = joined(first, second, second_ids);
    // A touch of the other rank's buffer (never in a real trace) is dropped, not renumbered wrongly.
    m.work.front().touches.push_back({second_ids["W"], Access::Read});
    for (int32_t process : {1, 2}) {
        const ProcessModel p = model_of_process(m, process);
        REQUIRE_EQ(p.model.allocations.size(), first.model.allocations.size());
        REQUIRE_EQ(p.model.work.size(), first.model.work.size());
        REQUIRE_EQ(p.model.library_calls.size(), first.model.library_calls.size());
        for (size_t a = 0; a < p.model.allocations.size(); ++a)
            CHECK_EQ(p.model.allocations[a].id, m.allocations[p.allocation_of[a]].id);
        for (size_t w = 0; w < p.model.work.size(); ++w) {
            const WorkItem& mine = p.model.work[w];
            const WorkItem& whole = m.work[p.work_of[w]];
            CHECK_EQ(mine.process, process);
            CHECK_EQ(mine.launch_ns, whole.launch_ns);
            for (const Touch& t : mine.touches)
                CHECK_EQ(m.allocations[p.allocation_of[size_t(t.allocation)]].process, process);
            if (mine.library_call != kNone)
                CHECK_EQ(p.model.library_calls[size_t(mine.library_call)].begin_ns,
                         m.library_calls[size_t(whole.library_call)].begin_ns);
        }
        CHECK_FALSE(p.model.pooled);
    }
    CHECK_EQ(processes_of(m), std::vector<int32_t>{1, 2});
}

TEST_CASE("one process launching kernels is tagged exactly as tag_model tags it") {
    Rank only = rank_run(1, 1000, 4);
    TraceModel m = only.model;
    Allocation idle;  // a helper process that allocated and launched nothing
    idle.id = 99, idle.process = 3, idle.bytes = 512, idle.alloc_ns = 1;
    m.allocations.insert(m.allocations.begin(), idle);
    for (WorkItem& w : m.work)
        for (Touch& t : w.touches) ++t.allocation;
    for (LibraryCall& c : m.library_calls) ++c.a, ++c.b, ++c.c, ++c.workspace;
    IterationSet each, whole;
    const TagResult a = tag_each_process(m, "", each);
    const TagResult b = tag_model(m, "", whole);
    REQUIRE_EQ(each.iterations.size(), 4u);
    REQUIRE_EQ(whole.iterations.size(), each.iterations.size());
    for (size_t i = 0; i < each.iterations.size(); ++i)
        CHECK_EQ(each.iterations[i].begin_ns, whole.iterations[i].begin_ns);
    for (size_t i = 0; i < m.allocations.size(); ++i) CHECK_EQ(a.tags[i].category, b.tags[i].category);
    CHECK_FALSE(a.tags[0].category.empty());
}
