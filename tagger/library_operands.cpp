#include "library_operands.h"

#include <tbdprof/trace/tables.h>

#include <algorithm>
#include <vector>

namespace tbdprof::tagger {
namespace {

struct Operand {
    int32_t allocation;
    uint64_t address;
    int64_t bytes;
    Access access;
};

// Read-write operands (running statistics) count as written: Write means "written (and maybe read)".
Access access_of(std::string_view access) {
    return access == "read" ? Access::Read : Access::Write;
}

void add_touch(WorkItem& w, int32_t allocation, Access access) {
    auto same =
        std::find_if(w.touches.begin(), w.touches.end(), [&](const Touch& t) { return t.allocation == allocation; });
    if (same == w.touches.end())
        w.touches.push_back({allocation, access});
    else if (access == Access::Write)
        same->access = Access::Write;
}

void add_pointer_use(TraceModel& m, uint32_t work, const Operand& o) {
    const Allocation& a = m.allocations[size_t(o.allocation)];
    if (o.address < a.address || o.address - a.address >= uint64_t(std::max<int64_t>(a.bytes, 1))) return;
    m.pointer_uses.push_back({work, o.allocation, o.address - a.address, o.bytes, o.bytes > 0, o.access});
}

}  // namespace

void add_library_operand_touches(const trace::Database& db, const std::unordered_map<int64_t, int32_t>& alloc_index,
                                 const IdIndex& call_index, TraceModel& m) {
    // Made at the first operand row: most traces have none, and these are per library call (at 10 M
    // kernels, 2.5 M calls: more memory than the model's own calls).
    std::vector<std::vector<Operand>> of_call;
    bool any = false;
    trace::LibraryOperandRow r;
    for (trace::RowReader<trace::LibraryOperandRow> rows(db); rows.next(r);) {
        if (of_call.empty()) of_call.resize(m.library_calls.size());
        const std::optional<size_t> call = call_index.find(r.library_call);
        auto allocation = r.allocation ? alloc_index.find(*r.allocation) : alloc_index.end();
        // Dropout's random-number states are no data of the model: filled once at set-up and read by
        // every forward, they would pass for data carried between operations (measured: cnn_train
        // --dropout's 8.6 MB of states, labelled other, tagged activations). The trace keeps them.
        if (!call || allocation == alloc_index.end() || r.role == "dropout_states") continue;
        of_call[*call].push_back(
            {allocation->second, uint64_t(r.address), std::max<int64_t>(0, r.bytes.value_or(0)), access_of(r.access)});
        any = true;
    }
    if (!any) return;
    for (size_t w = 0; w < m.work.size(); ++w) {
        WorkItem& item = m.work[w];
        if (item.library_call == kNone) continue;
        for (const Operand& o : of_call[size_t(item.library_call)]) {
            add_touch(item, o.allocation, o.access);
            if (m.pooled) add_pointer_use(m, uint32_t(w), o);
        }
    }
}

}  // namespace tbdprof::tagger
