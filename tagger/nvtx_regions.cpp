#include "nvtx_regions.h"

#include <tbdprof/trace/categories.h>
#include <tbdprof/trace/tables.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace tbdprof::tagger {
namespace {

// Nested live regions around one offset are few; beyond this many below it the search stops.
constexpr int kMaxNestedRegions = 16;

// The region each pointer use falls in (kNone: none): one that covers the offset and was registered
// when the work was enqueued (host times both; live from registration, up to but not including its
// end), the smallest when regions nest. A sweep over time keeps each allocation's live regions by
// offset, so the cost grows with uses and regions, not with their product.
std::vector<int32_t> regions_of_uses(const TraceModel& m) {
    std::vector<int32_t> result(m.pointer_uses.size(), kNone);
    std::vector<size_t> begins(m.regions.size()), ends(m.regions.size()), uses;
    for (size_t k = 0; k < m.regions.size(); ++k) begins[k] = ends[k] = k;
    auto end_of = [&](size_t k) { return m.regions[k].end_ns.value_or(std::numeric_limits<int64_t>::max()); };
    std::sort(begins.begin(), begins.end(),
              [&](size_t a, size_t b) { return m.regions[a].begin_ns < m.regions[b].begin_ns; });
    std::sort(ends.begin(), ends.end(), [&](size_t a, size_t b) { return end_of(a) < end_of(b); });
    std::unordered_map<int32_t, bool> has_regions;
    for (const RegisteredRegion& r : m.regions) has_regions[r.allocation] = true;
    for (size_t u = 0; u < m.pointer_uses.size(); ++u)
        if (m.pointer_uses[u].work < m.work.size() && has_regions.contains(m.pointer_uses[u].allocation))
            uses.push_back(u);
    auto at = [&](size_t u) { return m.work[m.pointer_uses[u].work].launch_ns; };
    std::stable_sort(uses.begin(), uses.end(), [&](size_t a, size_t b) { return at(a) < at(b); });
    std::unordered_map<int32_t, std::multimap<uint64_t, size_t>> live;  // allocation -> offset -> region
    size_t next_begin = 0, next_end = 0;
    for (size_t u : uses) {
        const int64_t t = at(u);
        for (; next_begin < begins.size() && m.regions[begins[next_begin]].begin_ns <= t; ++next_begin) {
            const RegisteredRegion& r = m.regions[begins[next_begin]];
            if (end_of(begins[next_begin]) > t) live[r.allocation].emplace(r.offset, begins[next_begin]);
        }
        for (; next_end < ends.size() && end_of(ends[next_end]) <= t; ++next_end) {
            const RegisteredRegion& r = m.regions[ends[next_end]];
            auto& regions = live[r.allocation];
            for (auto [it, last] = regions.equal_range(r.offset); it != last; ++it)
                if (it->second == ends[next_end]) {
                    regions.erase(it);
                    break;
                }
        }
        const PointerUse& use = m.pointer_uses[u];
        const auto found = live.find(use.allocation);
        if (found == live.end()) continue;
        const auto& regions = found->second;
        auto it = regions.upper_bound(use.offset);
        for (int seen = 0; it != regions.begin() && seen < kMaxNestedRegions; ++seen) {
            const size_t k = (--it)->second;
            const RegisteredRegion& r = m.regions[k];
            if (use.offset - r.offset < uint64_t(r.bytes) &&
                (result[u] == kNone || r.bytes < m.regions[size_t(result[u])].bytes))
                result[u] = static_cast<int32_t>(k);
        }
    }
    return result;
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
    constexpr uint32_t kUnused = std::numeric_limits<uint32_t>::max();
    const std::vector<int32_t> use_region = regions_of_uses(m);
    std::vector<Entry> regions(m.regions.size()), kept(set.ranges.size());
    std::vector<bool> with_regions(m.allocations.size(), false);
    for (const RegisteredRegion& r : m.regions) with_regions[size_t(r.allocation)] = true;
    for (size_t k = 0; k < m.regions.size(); ++k) {
        const RegisteredRegion& r = m.regions[k];
        regions[k] = {{r.allocation, r.offset, 0, kUnused, 0, r.bytes, true, false}, int32_t(k), kNone};
    }
    for (size_t i = 0; i < set.ranges.size(); ++i) {
        kept[i] = {set.ranges[i], kNone, int32_t(i)};
        if (with_regions[size_t(set.ranges[i].segment)]) kept[i].range.first_work = kUnused;  // rebuilt from its uses
    }
    for (size_t u = 0; u < m.pointer_uses.size(); ++u) {
        const PointerUse& use = m.pointer_uses[u];
        const bool known = use.allocation >= 0 && size_t(use.allocation) < with_regions.size();
        if (!known || !with_regions[size_t(use.allocation)] || use.work >= m.work.size()) continue;
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
