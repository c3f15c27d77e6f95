// Joining end-to-end mappings into segments (mapped_segments.h).
#include "mapped_segments.h"

#include <algorithm>

namespace tbdprof::tagger {
namespace {

struct Group {
    Allocation segment;
    std::vector<Allocation> mappings;  // as the trace has them
    bool open = false;                 // some mapping is never unmapped while recording
    int64_t last_unmap_ns = 0;
};

bool live_at(const Group& g, int64_t trace_ns) {
    return g.open || g.last_unmap_ns > trace_ns;
}

// A group that `m` extends at either end while it is live, or nullptr.
Group* group_extended_by(std::vector<Group>& groups, const Allocation& m) {
    for (Group& g : groups) {
        if (g.segment.process != m.process || !live_at(g, m.alloc_ns)) continue;
        const uint64_t end = g.segment.address + uint64_t(g.segment.bytes);
        if (end == m.address || m.address + uint64_t(m.bytes) == g.segment.address) return &g;
    }
    return nullptr;
}

void add_to(Group& g, const Allocation& m) {
    g.segment.address = std::min(g.segment.address, m.address);
    g.segment.bytes += m.bytes;
    g.open = g.open || !m.free_ns;
    g.last_unmap_ns = std::max(g.last_unmap_ns, m.free_ns.value_or(0));
    g.mappings.push_back(m);
}

}  // namespace

void join_mapped_ranges(std::vector<Allocation> mapped, std::vector<Allocation>& out,
                        std::unordered_map<int64_t, uint64_t>& offset_of_id) {
    std::stable_sort(mapped.begin(), mapped.end(),
                     [](const Allocation& x, const Allocation& y) { return x.alloc_ns < y.alloc_ns; });
    std::vector<Group> groups;
    for (const Allocation& m : mapped) {
        Group* g = group_extended_by(groups, m);
        if (!g) {
            // The first mapping names the segment (id, stack, time); its size and end grow.
            g = &groups.emplace_back();
            g->segment = m;
            g->segment.bytes = 0;
        }
        add_to(*g, m);
    }
    for (Group& g : groups) {
        if (g.mappings.size() >= 2) {
            g.segment.free_ns = g.open ? std::nullopt : std::optional<int64_t>(g.last_unmap_ns);
            for (const Allocation& m : g.mappings) {
                const uint64_t offset = m.address - g.segment.address;
                g.segment.pieces.push_back({m.id, offset, m.bytes});
                offset_of_id[m.id] = offset;
            }
        }
        out.push_back(std::move(g.segment));
    }
}

std::vector<MappedPiece> trace_pieces(const Allocation& a, uint64_t offset, int64_t bytes) {
    if (a.pieces.empty()) return {{a.id, offset, bytes}};
    std::vector<MappedPiece> out;
    const uint64_t end = offset + uint64_t(std::max<int64_t>(bytes, 0));
    for (const MappedPiece& p : a.pieces) {
        const uint64_t from = std::max(offset, p.offset), to = std::min(end, p.offset + uint64_t(p.bytes));
        if (from < to || (bytes == 0 && from == offset && offset < p.offset + uint64_t(p.bytes)))
            out.push_back({p.id, from - p.offset, int64_t(to > from ? to - from : 0)});
    }
    return out;
}

}  // namespace tbdprof::tagger
