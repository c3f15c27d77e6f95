// What the sub-range tests share: a pooled run built by hand (one segment at kBase, work items that
// point into it, optional step ranges) and the pieces found at an offset.
#pragma once

#include "pool_tagging.h"
#include "rules.h"
#include "subranges.h"
#include "timed_work.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace tbdprof::tagger::subranges_test {

using namespace tbdprof::tagger;

constexpr uint64_t kBase = 0x7f0000000000;

// A pooled run built by hand: one segment at kBase (index 0), work items that point into it, and
// optionally "step" ranges that make each group of work one iteration.
struct Pool {
    TraceModel model;
    int64_t now = 1000;

    explicit Pool(int64_t segment_bytes) {
        model.pooled = true;
        model.has_argument_info = true;
        Allocation segment;
        segment.id = 1;
        segment.address = kBase;
        segment.bytes = segment_bytes;
        segment.alloc_ns = now++;
        model.allocations.push_back(segment);
    }
    struct Use {
        uint64_t offset;
        Access access;
        int64_t bytes = 0;
        bool exact = false;
    };
    // One work item; its touches are what load_model would have made of the uses (one per
    // allocation).
    size_t work(WorkItem::Kind kind, std::vector<Use> uses, int32_t function = 1) {
        WorkItem w = tbdprof::tagger::test::timed_work(kind, function, now);
        if (!uses.empty()) w.touches.push_back({0, uses.front().access});
        auto index = static_cast<uint32_t>(model.work.size());
        for (const Use& u : uses) model.pointer_uses.push_back({index, 0, u.offset, u.bytes, u.exact, u.access});
        model.work.push_back(std::move(w));
        return index;
    }
    size_t kernel(std::vector<Use> uses, int32_t function = 1) {
        return work(WorkItem::Kind::Kernel, std::move(uses), function);
    }
    size_t set(uint64_t offset, int64_t bytes) {
        return work(WorkItem::Kind::Set, {{offset, Access::Write, bytes, true}});
    }
    size_t copy_in(uint64_t offset, int64_t bytes) {
        return work(WorkItem::Kind::CopyHtoD, {{offset, Access::Write, bytes, true}});
    }
    // A GEMM reading a and b and writing c (offsets into the segment), with a workspace when
    // `workspace` is given: the library call and its kernel, with the pointer uses load_model makes.
    size_t gemm(uint64_t a, uint64_t b, uint64_t c, std::optional<uint64_t> workspace = {}, int64_t c_bytes = 0) {
        LibraryCall call;
        call.a = call.b = call.c = 0;
        CallOperands operands{.a_address = kBase + a, .b_address = kBase + b, .c_address = kBase + c};
        if (workspace) call.workspace = 0, operands.workspace_address = kBase + *workspace;
        std::vector<Use> uses = {{a, Access::Read}, {b, Access::Read}, {c, Access::Write, c_bytes}};
        if (workspace) uses.push_back({*workspace, Access::Write});
        size_t index = kernel(std::move(uses), 100);
        call_on(index, call, operands);
        return index;
    }
    // Makes `work` the kernel of `call`, and marks which of the call's operands each of its pointer
    // uses is, as load_model does from the operands' addresses.
    void call_on(size_t work, const LibraryCall& call, const CallOperands& operands) {
        model.library_calls.push_back(call);
        model.work[work].library_call = static_cast<int32_t>(model.library_calls.size() - 1);
        for (PointerUse& u : model.pointer_uses)
            if (u.work == work) u.operand_of_call = operand_of_call(call, operands, u.allocation, kBase + u.offset);
    }
    void step(size_t first, size_t end) {
        model.ranges.push_back({0, model.work[first].launch_ns, model.work[end - 1].end_ns + 1, "step"});
    }
};

inline IterationSet steps_of(const TraceModel& m) {
    return detect_iterations(m, "");
}

// Tags a made-up run of four steps, which it must find as four iterations.
inline TagResult tag_four_steps(const TraceModel& m) {
    IterationSet its;
    TagResult r = tag_model(m, "", its);
    REQUIRE_EQ(its.iterations.size(), 4u);
    return r;
}

inline std::vector<SubRange> at(const SubRangeSet& set, uint64_t offset) {
    std::vector<SubRange> result;
    for (const SubRange& r : set.ranges)
        if (r.offset == offset && !r.merged) result.push_back(r);
    return result;
}

// A kernel that takes its pointers in a struct, every one writable (as PyTorch's elementwise kernels
// do): each (offset, slot), the slot being the word of the function's parameters that held it.
inline size_t struct_kernel(Pool& p, std::vector<std::pair<uint64_t, uint32_t>> words, int32_t function) {
    std::vector<Pool::Use> uses;
    for (auto [offset, slot] : words) uses.push_back({offset, Access::Write});
    size_t index = p.kernel(uses, function);
    for (size_t i = 0; i < words.size(); ++i) {
        p.model.pointer_uses[p.model.pointer_uses.size() - words.size() + i].slot = words[i].second;
        p.model.kernel_slots = std::max(p.model.kernel_slots, words[i].second + 1);
    }
    return index;
}

// How many tagged pieces start at `offset` with `category`.
inline size_t pieces(const TagResult& r, uint64_t offset, const char* category) {
    return size_t(std::count_if(r.subranges.begin(), r.subranges.end(), [&](const SubRangeTag& t) {
        return t.offset == offset && t.tag.category == category;
    }));
}

}  // namespace tbdprof::tagger::subranges_test
