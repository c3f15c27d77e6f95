#include "memory_subranges.h"

#include <algorithm>
#include <set>

namespace tbdprof::analyzer {
namespace {

// Which of two sub-ranges owns a byte they both cover: the narrower, then the later, then the lower id.
struct Precedence {
    const std::vector<SubRange>* ranges;
    bool operator()(uint32_t x, uint32_t y) const {
        const SubRange& a = (*ranges)[x];
        const SubRange& b = (*ranges)[y];
        if (a.bytes != b.bytes) return a.bytes < b.bytes;
        if (a.begin_ns != b.begin_ns) return a.begin_ns > b.begin_ns;
        if (a.id != b.id) return a.id < b.id;
        return x < y;
    }
};

// One byte piece covered by several sub-ranges: sweep their lifetimes in time order and give each
// stretch to the sub-range that takes precedence, merging stretches of one category and confidence.
void resolve_piece(const std::vector<SubRange>& ranges, const std::vector<uint32_t>& covering, int64_t bytes,
                   ResolvedSubRanges& out) {
    struct Change {
        int64_t trace_ns;
        bool starts;
        uint32_t range;
    };
    std::vector<Change> changes;
    changes.reserve(covering.size() * 2);
    for (uint32_t r : covering) {
        changes.push_back({ranges[r].begin_ns, true, r});
        changes.push_back({ranges[r].end_ns, false, r});
    }
    std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
        if (a.trace_ns != b.trace_ns) return a.trace_ns < b.trace_ns;
        return a.starts < b.starts;  // ends first: [begin, end) intervals
    });
    std::set<uint32_t, Precedence> active(Precedence{&ranges});
    AttributedPiece open{bytes, 0, 0, -1, false};
    auto close_at = [&](int64_t t) {
        if (open.category >= 0 && t > open.begin_ns) {
            open.end_ns = t;
            out.pieces.push_back(open);
        }
        open.category = -1;
    };
    for (size_t i = 0; i < changes.size();) {
        const int64_t t = changes[i].trace_ns;
        for (; i < changes.size() && changes[i].trace_ns == t; ++i) {
            if (changes[i].starts) {
                if (!active.empty()) out.overlapped = true;
                active.insert(changes[i].range);
            } else {
                active.erase(changes[i].range);
            }
        }
        const int category = active.empty() ? -1 : ranges[*active.begin()].category;
        const bool low = !active.empty() && ranges[*active.begin()].low_confidence;
        if (category == open.category && low == open.low_confidence) continue;
        close_at(t);
        if (category >= 0) open = {bytes, t, t, category, low};
    }
    close_at(changes.empty() ? 0 : changes.back().trace_ns);
}

}  // namespace

ResolvedSubRanges resolve_subranges(std::vector<SubRange> ranges, int64_t segment_bytes, size_t work_limit) {
    ResolvedSubRanges out;
    std::vector<SubRange> kept;
    kept.reserve(ranges.size());
    for (SubRange r : ranges) {
        if (r.offset < 0 || r.offset >= segment_bytes || r.bytes <= 0 || r.end_ns <= r.begin_ns) continue;
        r.bytes = std::min(r.bytes, segment_bytes - r.offset);
        kept.push_back(r);
    }
    std::vector<int64_t> edges;
    edges.reserve(kept.size() * 2);
    for (const SubRange& r : kept) {
        edges.push_back(r.offset);
        edges.push_back(r.offset + r.bytes);
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    if (edges.size() < 2) return out;

    // The sub-ranges covering each piece between two consecutive edges.
    std::vector<std::vector<uint32_t>> covering(edges.size() - 1);
    size_t work = 0;
    for (uint32_t i = 0; i < kept.size(); ++i) {
        const size_t first =
            static_cast<size_t>(std::lower_bound(edges.begin(), edges.end(), kept[i].offset) - edges.begin());
        const size_t last = static_cast<size_t>(
            std::lower_bound(edges.begin(), edges.end(), kept[i].offset + kept[i].bytes) - edges.begin());
        work += last - first;
        if (work > work_limit) {
            out.too_many = true;
            out.pieces.clear();
            return out;
        }
        for (size_t p = first; p < last; ++p) covering[p].push_back(i);
    }
    for (size_t p = 0; p + 1 < edges.size(); ++p) {
        const int64_t bytes = edges[p + 1] - edges[p];
        const std::vector<uint32_t>& list = covering[p];
        if (list.empty()) continue;
        if (list.size() == 1) {
            const SubRange& r = kept[list[0]];
            out.pieces.push_back({bytes, r.begin_ns, r.end_ns, r.category, r.low_confidence});
            continue;
        }
        resolve_piece(kept, list, bytes, out);
    }
    // Neighbouring pieces with the same life, category and confidence are one piece (fewer events to replay).
    std::vector<AttributedPiece> merged;
    std::stable_sort(out.pieces.begin(), out.pieces.end(), [](const AttributedPiece& a, const AttributedPiece& b) {
        if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
        if (a.end_ns != b.end_ns) return a.end_ns < b.end_ns;
        if (a.category != b.category) return a.category < b.category;
        return a.low_confidence < b.low_confidence;
    });
    for (const AttributedPiece& piece : out.pieces) {
        if (!merged.empty() && merged.back().begin_ns == piece.begin_ns && merged.back().end_ns == piece.end_ns &&
            merged.back().category == piece.category && merged.back().low_confidence == piece.low_confidence) {
            merged.back().bytes += piece.bytes;
        } else {
            merged.push_back(piece);
        }
    }
    out.pieces = std::move(merged);
    return out;
}

}  // namespace tbdprof::analyzer
