// Mappings joined into segments for the memory what-if (whatif_mapped.h).
#include "whatif_mapped.h"

#include <algorithm>
#include <string>

#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

struct Mapping {
    size_t index = 0;
    int64_t process = 0, address = 0, bytes = 0, map_ns = 0, unmap_ns = INT64_MAX;
};

struct Group {
    int64_t process = 0, begin = 0, end = 0;  // the segment's address range so far
    int64_t last_unmap_ns = 0;                // INT64_MAX while some mapping is never unmapped
    std::vector<Mapping> mappings;
};

std::vector<Mapping> read_mappings(const TraceFile& trace, const std::vector<Allocation>& allocations,
                                   size_t real_count) {
    std::unordered_map<int64_t, size_t> index_of;
    for (size_t i = 0; i < real_count; ++i) index_of[allocations[i].id] = i;
    std::vector<Mapping> out;
    trace::Statement rows(trace.db,
                          "SELECT id, process, address, bytes FROM allocations WHERE kind = 'device_mapped' "
                          "AND bytes > 0");
    while (rows.step()) {
        const auto found = index_of.find(rows.column_int(0));
        if (found == index_of.end()) continue;
        const Allocation& a = allocations[found->second];
        out.push_back(
            {found->second, rows.column_int(1), rows.column_int(2), rows.column_int(3), a.alloc_ns, a.free_ns});
    }
    std::stable_sort(out.begin(), out.end(), [](const Mapping& x, const Mapping& y) { return x.map_ns < y.map_ns; });
    return out;
}

// The live group of `m`'s process that `m` extends at either end, or nullptr.
Group* extended_group(std::vector<Group>& groups, const Mapping& m) {
    for (Group& g : groups)
        if (g.process == m.process && g.last_unmap_ns > m.map_ns &&
            (g.end == m.address || m.address + m.bytes == g.begin))
            return &g;
    return nullptr;
}

}  // namespace

MappedSegments join_mapped_segments(const TraceFile& trace, const std::vector<Allocation>& allocations,
                                    size_t real_count) {
    std::vector<Group> groups;
    for (const Mapping& m : read_mappings(trace, allocations, real_count)) {
        Group* g = extended_group(groups, m);
        if (!g) {
            g = &groups.emplace_back();
            g->process = m.process;
            g->begin = g->end = m.address;
        }
        g->begin = std::min(g->begin, m.address);
        g->end = std::max(g->end, m.address + m.bytes);
        g->last_unmap_ns = std::max(g->last_unmap_ns, m.unmap_ns);
        g->mappings.push_back(m);
    }
    MappedSegments out;
    for (const Group& g : groups) {
        const size_t head = g.mappings.front().index;  // the first mapped names the segment
        out.bytes[head] = g.end - g.begin;
        out.page_bytes[head] = g.mappings.front().bytes;
        for (const Mapping& m : g.mappings) {
            out.place[m.index] = {head, m.address - g.begin};
            out.page_offsets[head].push_back(m.address - g.begin);
        }
        std::sort(out.page_offsets[head].begin(), out.page_offsets[head].end());
    }
    return out;
}

}  // namespace tbdprof::analyzer
