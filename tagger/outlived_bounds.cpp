// (outlived_bounds.h)
#include "outlived_bounds.h"

#include "output_slots.h"

namespace tbdprof::tagger {

bool library_overwrite(const TraceModel& m, const PointerUse& u) {
    const int32_t call = m.work[u.work].library_call;
    if (call == kNone) return false;
    return !m.library_calls[size_t(call)].output_read && u.operand_of_call.c;
}

bool declared_write(const TraceModel& m, const PointerUse& u) {
    if (u.work >= m.work.size() || u.access != Access::Write || u.slot >= m.kernel_slots ||
        u.slot >= m.aggregate_words.size() || m.aggregate_words[u.slot])
        return false;
    const WorkItem& w = m.work[u.work];
    return w.kind == WorkItem::Kind::Kernel && w.library_call == kNone;
}

bool bound_of_one_tenant(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& first,
                         const PointerUse& previous, const PointerUse& u, bool sized) {
    if (u.work == previous.work) return false;
    // A product read, then written anew by a plain kernel: a value of its own (an in-place update of
    // a weight is not this: a weight's piece does not begin with a product's overwrite in its step).
    if (library_overwrite(m, first) && declared_write(m, u) && reads_value(m, outputs, previous)) return true;
    // Tenants without size evidence, the last one read, then a product written there.
    return !sized && previous.access == Access::Read && library_overwrite(m, u);
}

}  // namespace tbdprof::tagger
