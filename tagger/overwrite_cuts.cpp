#include "overwrite_cuts.h"

#include <algorithm>
#include <cstdint>

namespace tbdprof::tagger {
namespace {

// Whether `u` certainly reads what its address holds: a pointer to const, a library call's input
// operand, a copy's source. (A writable kernel pointer may only read, but says nothing for sure:
// PyTorch's elementwise kernels take every operand through one.)
bool certain_read(const TraceModel& m, const PointerUse& u) {
    if (u.access != Access::Read) return false;
    const WorkItem& w = m.work[u.work];
    return w.kind == WorkItem::Kind::Kernel || w.kind == WorkItem::Kind::CopyDtoD || w.kind == WorkItem::Kind::CopyDtoH;
}

}  // namespace

bool library_output(const TraceModel& m, const PointerUse& u) {
    const int32_t call = m.work[u.work].library_call;
    if (call == kNone || u.access != Access::Write) return false;
    return !m.library_calls[size_t(call)].output_read && u.operand_of_call.c;
}

size_t overwrite_after_read(const TraceModel& m, const TagResult& r, const std::vector<int>& step,
                            const std::vector<size_t>& uses, size_t first_update) {
    const size_t none = r.optimizer_work.size();
    if (first_update >= none || uses.empty()) return none;
    uint64_t start = UINT64_MAX;
    for (size_t index : uses) start = std::min(start, m.pointer_uses[index].offset);
    std::vector<size_t> in_step;  // the step's uses before the update, in launch order
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        if (u.work < first_update && step[u.work] == step[first_update] && !r.optimizer_work[u.work])
            in_step.push_back(index);
    }
    std::sort(in_step.begin(), in_step.end(),
              [&](size_t a, size_t b) { return m.pointer_uses[a].work < m.pointer_uses[b].work; });
    bool read = false;
    for (size_t index : in_step) {
        const PointerUse& u = m.pointer_uses[index];
        if (read && u.offset == start && library_output(m, u)) return u.work;
        read |= certain_read(m, u);
    }
    return none;
}

}  // namespace tbdprof::tagger
