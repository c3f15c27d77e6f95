#include "named_ranges.h"

#include "rules_context.h"

#include <algorithm>
#include <utility>

namespace tbdprof::tagger {

RangesNamed::RangesNamed(const std::vector<Range>& ranges, std::string_view word) {
    rules::LoweredName lowered;
    for (const Range& r : ranges)
        if (lowered(r.name).find(word) != std::string_view::npos) entries_.push_back({r.process, r.begin_ns, r.end_ns});
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
        return std::pair(a.process, a.begin_ns) < std::pair(b.process, b.begin_ns);
    });
    // A moment is inside a range that begins no later than it iff the latest end among those ranges
    // is no earlier than it (a range that ends before it begins never counts: its end is earlier).
    for (size_t i = 1; i < entries_.size(); ++i)
        if (entries_[i].process == entries_[i - 1].process)
            entries_[i].max_end_ns = std::max(entries_[i].max_end_ns, entries_[i - 1].max_end_ns);
}

bool RangesNamed::contain(int32_t process, int64_t trace_ns) const {
    // The last range of `process` that begins at or before trace_ns.
    auto after = std::upper_bound(
        entries_.begin(), entries_.end(), std::pair(process, trace_ns),
        [](const std::pair<int32_t, int64_t>& key, const Entry& e) { return key < std::pair(e.process, e.begin_ns); });
    if (after == entries_.begin()) return false;
    const Entry& last = *std::prev(after);
    return last.process == process && last.max_end_ns >= trace_ns;
}

}  // namespace tbdprof::tagger
