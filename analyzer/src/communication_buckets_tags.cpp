// The memory tags the bucket view reads: allocation categories and the categories of the tensors inside
// pooled segments (allocation_subranges), in memory, so that each look-up is no scan of a table without
// an index on the allocation.
#include <algorithm>

#include "communication_buckets.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

// Sub-ranges looked at before the look-up settles for the allocation's category: a segment reused by
// many tensors over a long run holds many sub-ranges at one offset.
constexpr int kMaxSubrangesScanned = 4096;

}  // namespace

MemoryTags::MemoryTags(const TraceFile& trace) {
    trace::Statement rows(trace.db, "SELECT allocation, category FROM allocation_categories");
    while (rows.step()) allocations_[rows.column_int(0)] = rows.column_text(1);
    if (!trace::has_table(trace.db, "allocation_subranges")) return;
    trace::Statement subranges(trace.db,
                               "SELECT allocation, offset, bytes, begin_ns, coalesce(end_ns, 9223372036854775807), "
                               "category FROM allocation_subranges WHERE category IS NOT NULL");
    while (subranges.step())
        subranges_[subranges.column_int(0)].push_back({subranges.column_int(1), subranges.column_int(2),
                                                       subranges.column_int(3), subranges.column_int(4),
                                                       subranges.column_text(5)});
    for (auto& [allocation, list] : subranges_)
        std::sort(list.begin(), list.end(), [](const Subrange& a, const Subrange& b) { return a.offset < b.offset; });
}

std::string_view MemoryTags::category(int64_t allocation, int64_t offset, int64_t trace_ns) const {
    if (const auto found = subranges_.find(allocation); found != subranges_.end()) {
        const std::vector<Subrange>& list = found->second;
        // The live sub-range covering the offset that starts nearest below it: the narrowest tensor.
        auto it =
            std::partition_point(list.begin(), list.end(), [offset](const Subrange& s) { return s.offset <= offset; });
        for (int scanned = 0; it != list.begin() && scanned < kMaxSubrangesScanned; ++scanned) {
            --it;
            if (offset < it->offset + it->bytes && it->begin_ns <= trace_ns && trace_ns <= it->end_ns)
                return it->category;
        }
    }
    const auto own = allocations_.find(allocation);
    return own == allocations_.end() ? std::string_view() : std::string_view(own->second);
}

}  // namespace tbdprof::analyzer
