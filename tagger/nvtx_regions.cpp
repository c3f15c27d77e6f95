#include "nvtx_regions.h"

#include <tbdprof/trace/categories.h>
#include <tbdprof/trace/tables.h>

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

namespace tbdprof::tagger {
namespace {

// Regions of each allocation that has any: [first, end) in model.regions, and the largest region's
// bytes (how far below an offset a region covering it can start).
struct RegionSpan {
    size_t first = 0, end = 0;
    int64_t largest = 0;
};

std::unordered_map<int32_t, RegionSpan> spans_of(const TraceModel& m) {
    std::unordered_map<int32_t, RegionSpan> spans;
    for (size_t k = 0; k < m.regions.size(); ++k) {
        auto [it, inserted] = spans.try_emplace(m.regions[k].allocation, RegionSpan{k, k, 0});
        it->second.end = k + 1;
        it->second.largest = std::max(it->second.largest, m.regions[k].bytes);
    }
    return spans;
}

// The region a pointer use falls in: it covers the offset and was registered when the work was
// enqueued (host times both). Nested regions: the smallest. kNone when none.
int32_t region_of_use(const TraceModel& m, const RegionSpan& span, const PointerUse& use) {
    const int64_t at = m.work[use.work].launch_ns;
    auto begin = m.regions.begin() + std::ptrdiff_t(span.first);
    auto it = std::upper_bound(begin, m.regions.begin() + std::ptrdiff_t(span.end), use.offset,
                               [](uint64_t offset, const RegisteredRegion& r) { return offset < r.offset; });
    int32_t best = kNone;
    while (it != begin) {
        const RegisteredRegion& r = *--it;
        if (r.offset + uint64_t(span.largest) <= use.offset) break;  // none further down reaches it
        const bool covers = use.offset < r.offset + uint64_t(r.bytes);
        const bool live = r.begin_ns <= at && (!r.end_ns || at < *r.end_ns);
        if (covers && live && (best == kNone || r.bytes < m.regions[size_t(best)].bytes))
            best = static_cast<int32_t>(it - m.regions.begin());
    }
    return best;
}

struct Entry {
    SubRange range;
    int32_t region = kNone;
    int32_t old = kNone;  // index in the derived set, for inferred sub-ranges kept
};

void widen(SubRange& range, uint32_t work) {
    range.first_work = std::min(range.first_work, work);
    range.last_work = std::max(range.last_work, work);
}

// In allocations holding regions: the regions (those some work used) replace the inferred
// sub-ranges; inferred ones keep the uses no region covers, and go when none is left.
void replace_with_regions(const TraceModel& m, SubRangeSet& set, std::vector<int32_t>& region_of_range) {
    const auto spans = spans_of(m);
    constexpr uint32_t kUnused = std::numeric_limits<uint32_t>::max();
    std::vector<int32_t> use_region(m.pointer_uses.size(), kNone);
    std::vector<Entry> regions(m.regions.size()), kept(set.ranges.size());
    for (size_t k = 0; k < m.regions.size(); ++k) {
        const RegisteredRegion& r = m.regions[k];
        regions[k] = {{r.allocation, r.offset, 0, kUnused, 0, r.bytes, true, false}, int32_t(k), kNone};
    }
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        kept[i] = {set.ranges[i], kNone, int32_t(i)};
        if (spans.contains(set.ranges[i].segment)) kept[i].range.first_work = kUnused;  // rebuilt from its uses
    }
    for (size_t u = 0; u < m.pointer_uses.size(); ++u) {
        const PointerUse& use = m.pointer_uses[u];
        auto span = spans.find(use.allocation);
        if (span == spans.end() || use.work >= m.work.size()) continue;
        use_region[u] = region_of_use(m, span->second, use);
        if (use_region[u] != kNone) {
            widen(regions[size_t(use_region[u])].range, use.work);
        } else if (set.owner[u] != kNone) {
            Entry& entry = kept[size_t(set.owner[u])];
            if (entry.range.first_work == kUnused) entry.range.last_work = use.work;
            widen(entry.range, use.work);
        }
    }
    std::vector<Entry> entries;
    for (const Entry& e : kept)
        if (e.range.first_work != kUnused && !e.range.merged) entries.push_back(e);
    for (const Entry& e : regions)
        if (e.range.first_work != kUnused) entries.push_back(e);
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.range.segment, a.range.offset, a.range.first_work) <
               std::tie(b.range.segment, b.range.offset, b.range.first_work);
    });
    std::vector<int32_t> new_of_old(set.ranges.size(), kNone), new_of_region(m.regions.size(), kNone);
    set.ranges.clear();
    region_of_range.clear();
    for (const Entry& e : entries) {
        const auto index = static_cast<int32_t>(set.ranges.size());
        (e.region != kNone ? new_of_region[size_t(e.region)] : new_of_old[size_t(e.old)]) = index;
        set.ranges.push_back(e.range);
        region_of_range.push_back(e.region);
    }
    for (size_t u = 0; u < set.owner.size(); ++u) {
        if (use_region[u] != kNone)
            set.owner[u] = new_of_region[size_t(use_region[u])];
        else if (set.owner[u] != kNone)
            set.owner[u] = new_of_old[size_t(set.owner[u])];
    }
    assign_extents(m, set);
}

std::string quoted(const std::string& name) {
    return "\"" + name + "\"";
}

}  // namespace

std::optional<std::string_view> category_of_region_name(std::string_view name) {
    for (int i = 0; i < trace::kStoredCategoryCount; ++i) {
        const std::string_view category = trace::kCategoryNames[size_t(i)];
        if (!name.starts_with(category)) continue;
        if (name.size() == category.size() || name[category.size()] == ':' || name[category.size()] == '/')
            return category;
    }
    return std::nullopt;
}

void load_registered_regions(const trace::Database& db, const std::unordered_map<int64_t, int32_t>& alloc_index,
                             TraceModel& m) {
    trace::MemoryRegionRow r;
    for (trace::RowReader<trace::MemoryRegionRow> rows(db); rows.next(r);) {
        auto found = r.allocation ? alloc_index.find(*r.allocation) : alloc_index.end();
        if (found == alloc_index.end() || r.bytes <= 0) continue;  // not in device memory the model holds
        const Allocation& a = m.allocations[size_t(found->second)];
        const uint64_t offset = uint64_t(r.address) - a.address;
        if (uint64_t(r.address) < a.address || offset >= uint64_t(std::max<int64_t>(a.bytes, 1))) continue;
        const int64_t bytes = std::min<int64_t>(r.bytes, a.bytes - int64_t(offset));
        m.regions.push_back({found->second, offset, bytes, r.register_ns, r.unregister_ns, std::string(r.name)});
    }
    std::sort(m.regions.begin(), m.regions.end(), [](const RegisteredRegion& x, const RegisteredRegion& y) {
        return std::tie(x.allocation, x.offset, x.begin_ns) < std::tie(y.allocation, y.offset, y.begin_ns);
    });
    m.pooled |= !m.regions.empty();
}

SubRangeSet derive_with_regions(const TraceModel& m, const IterationSet& its, std::vector<int32_t>& region_of_range) {
    SubRangeSet set = derive_subranges(m, its);
    region_of_range.assign(set.ranges.size(), kNone);
    if (!m.regions.empty()) replace_with_regions(m, set, region_of_range);
    return set;
}

void apply_region_names(const TraceModel& m, const std::vector<int32_t>& region_of_range,
                        const std::vector<int32_t>& virtual_index, TagResult& result) {
    for (size_t i = 0; i < region_of_range.size() && i < virtual_index.size(); ++i) {
        if (region_of_range[i] == kNone || virtual_index[i] == kNone) continue;
        const std::string& name = m.regions[size_t(region_of_range[i])].name;
        Tag& tag = result.tags[size_t(virtual_index[i])];
        const auto category = category_of_region_name(name);
        if (!category) {  // the rules' tag stands; say which region it is
            if (!name.empty()) tag.evidence = "NVTX region " + quoted(name) + "; " + tag.evidence;
            continue;
        }
        tag = Tag{std::string(*category), 1.0, kRegionNameRule,
                  "the program named this region " + quoted(name) +
                      " (NVTX memory extension), and the name begins with the category",
                  "the rules alone said " + tag.category + " (" + tag.rule + "); " + tag.evidence};
    }
}

void finish_region_rows(const TraceModel& m, const SubRangeSet& set, const std::vector<int32_t>& region_of_range,
                        const std::vector<int32_t>& virtual_index, TagResult& result) {
    // collect() wrote one row per sub-range with a virtual allocation, in set order.
    size_t row = 0;
    for (size_t i = 0; i < set.ranges.size() && row < result.subranges.size(); ++i) {
        if (i >= virtual_index.size() || virtual_index[i] == kNone) continue;
        SubRangeTag& tag = result.subranges[row++];
        if (i >= region_of_range.size() || region_of_range[i] == kNone) continue;
        const RegisteredRegion& region = m.regions[size_t(region_of_range[i])];
        tag.begin_ns = region.begin_ns;
        tag.end_ns = region.end_ns ? *region.end_ns : std::max(tag.end_ns, region.begin_ns);
        ++result.registered_regions;
        if (tag.tag.rule == kRegionNameRule) ++result.named_regions;
    }
}

}  // namespace tbdprof::tagger
