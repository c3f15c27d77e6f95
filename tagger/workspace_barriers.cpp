#include "workspace_barriers.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

// Beyond this many workspace uses in one gap between two uses of an address the search stops: a
// huge pool must not cost quadratic time, and a missed cut only leaves the pieces as before.
constexpr size_t kMaxSpansPerGap = 4096;

}  // namespace

std::vector<WorkspaceSpan> workspace_spans(const TraceModel& m, const std::vector<size_t>& uses) {
    std::vector<WorkspaceSpan> spans;
    for (size_t index : uses) {
        const PointerUse& u = m.pointer_uses[index];
        const int32_t call = m.work[u.work].library_call;
        if (call == kNone || !u.operand_of_call.workspace || u.bytes <= 0) continue;
        spans.push_back({u.work, u.offset, u.bytes, call});
    }
    std::sort(spans.begin(), spans.end(),
              [](const WorkspaceSpan& a, const WorkspaceSpan& b) { return a.work < b.work; });
    return spans;
}

bool workspace_between(const TraceModel& m, const std::vector<WorkspaceSpan>& spans, uint64_t offset, uint32_t before,
                       uint32_t after) {
    if (after <= before + 1) return false;
    auto it = std::upper_bound(spans.begin(), spans.end(), before,
                               [](uint32_t work, const WorkspaceSpan& s) { return work < s.work; });
    const int32_t call_before = m.work[before].library_call;
    const int32_t call_after = m.work[after].library_call;
    for (size_t scanned = 0; it != spans.end() && it->work < after && scanned < kMaxSpansPerGap; ++it, ++scanned) {
        if (it->library_call == call_before || it->library_call == call_after) continue;
        if (it->offset < offset && offset < it->offset + uint64_t(it->bytes)) return true;
    }
    return false;
}

}  // namespace tbdprof::tagger
