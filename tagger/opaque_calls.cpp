#include "opaque_calls.h"

#include <tbdprof/trace/tables.h>

#include <set>
#include <utility>
#include <vector>

namespace tbdprof::tagger {

std::vector<bool> detach_kernels_of_opaque_calls(const trace::Database& db, const IdIndex& call_index,
                                                 bool calls_resolved, TraceModel& m) {
    std::vector<bool> detached(m.work.size(), false);
    if (!calls_resolved || m.library_calls.empty()) return detached;
    std::vector<bool> known(m.library_calls.size(), false);
    for (size_t i = 0; i < m.library_calls.size(); ++i) {
        const LibraryCall& c = m.library_calls[i];
        // A collective without operands is an NCCL group's end, whose kernel runs the group's calls
        // (model.cpp, resolve_nccl_groups): its roles come from them.
        known[i] =
            c.a != kNone || c.b != kNone || c.c != kNone || c.workspace != kNone || c.collective != Collective::None;
    }
    trace::LibraryOperandRow r;
    for (trace::RowReader<trace::LibraryOperandRow> rows(db); rows.next(r);)
        if (const std::optional<size_t> call = call_index.find(r.library_call)) known[*call] = true;
    for (size_t i = 0; i < m.work.size(); ++i) {
        WorkItem& w = m.work[i];
        if (w.kind == WorkItem::Kind::Kernel && w.library_call != kNone && !known[size_t(w.library_call)])
            w.library_call = kNone, detached[i] = true;
    }
    return detached;
}

void drop_opaque_only_pointer_uses(const std::vector<bool>& detached, TraceModel& m) {
    auto is_detached = [&](const PointerUse& u) { return u.work < detached.size() && detached[u.work]; };
    std::set<std::pair<int32_t, uint64_t>> used_elsewhere;
    for (const PointerUse& u : m.pointer_uses)
        if (!is_detached(u)) used_elsewhere.emplace(u.allocation, u.offset);
    std::erase_if(m.pointer_uses, [&](const PointerUse& u) {
        return is_detached(u) && !used_elsewhere.contains({u.allocation, u.offset});
    });
}

}  // namespace tbdprof::tagger
