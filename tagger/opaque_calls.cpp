#include "opaque_calls.h"

#include <tbdprof/trace/tables.h>

#include <vector>

namespace tbdprof::tagger {

void detach_kernels_of_opaque_calls(const trace::Database& db, const IdIndex& call_index, bool calls_resolved,
                                    TraceModel& m) {
    if (!calls_resolved || m.library_calls.empty()) return;
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
    for (WorkItem& w : m.work)
        if (w.kind == WorkItem::Kind::Kernel && w.library_call != kNone && !known[size_t(w.library_call)])
            w.library_call = kNone;
}

}  // namespace tbdprof::tagger
