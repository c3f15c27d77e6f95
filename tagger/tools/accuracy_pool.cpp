// Scoring labelled tensors inside pool segments against the tagger's sub-ranges (accuracy.h).
#include "accuracy.h"

#include <tbdprof/trace/tables.h>

#include <algorithm>
#include <climits>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

struct Segment {
    int64_t id = 0;
    uint64_t address = 0;
    int64_t bytes = 0, alloc_ns = 0, free_ns = INT64_MAX;
    std::string category;
};

struct Sub {
    uint64_t offset = 0;
    int64_t bytes = 0, begin_ns = 0, end_ns = 0;
    std::string category;
};

// Whether a labelled training step (trace clock) falls in both [a_from, a_to] and [b_from, b_to].
bool in_a_step(const std::vector<std::pair<int64_t, int64_t>>& steps, int64_t a_from, int64_t a_to, int64_t b_from,
               int64_t b_to) {
    const int64_t from = std::max(a_from, b_from), to = std::min(a_to, b_to);
    return std::any_of(steps.begin(), steps.end(),
                       [&](const auto& step) { return step.first <= to && step.second >= from; });
}

// How a sub-range covering a labelled tensor's bytes ranks as the tensor's own, best first.
struct Ranking {
    // Whether the sub-range's first use was launched after the previous tenant of the bytes was freed
    // and before this tensor was (host order, both): the tensor's own first use comes after every
    // earlier tenant's last, and an earlier tenant's first use before its own free. The previous
    // free, not the tensor's allocation, bounds it, so that a label whose clock runs a little behind
    // the trace's (a converted clock) keeps its own first use. The sub-range's end is no help here:
    // it is the end of its last work on the device, which runs behind the host (a whole step behind
    // when the program enqueues ahead), so an earlier tenant's end can fall well inside the tensor's
    // life, and its life match then beat the tensor's own.
    bool own = false;
    // Whether it is used during one of the tensor's labelled training steps.
    bool in_step = false;
    double life_match = -1;  // overlap over union of the two lives
};

// The tensor's life [from, to] and the previous tenant's free (`after`; INT64_MIN when none), all
// on the trace's clock.
struct Life {
    int64_t from = 0, to = 0, after = INT64_MIN;
};

Ranking rank(const Sub& s, const Life& life, const std::vector<std::pair<int64_t, int64_t>>& steps) {
    Ranking r;
    r.own = s.begin_ns > life.after && s.begin_ns <= life.to;
    r.in_step = in_a_step(steps, s.begin_ns, s.end_ns, life.from, life.to);
    double overlap = double(std::min(s.end_ns, life.to)) - double(std::max(s.begin_ns, life.from)) + 1;
    double both = double(std::max(s.end_ns, life.to)) - double(std::min(s.begin_ns, life.from)) + 1;
    r.life_match = overlap / both;
    return r;
}

// Whether `a` outranks `b`: first the tensor's own sub-range over an earlier tenant's; among those,
// or when none is the tensor's own (a tensor never used, or whose first use is a piece of a
// sub-range begun before the previous tenant's free, such as a merged range), one used during the
// tensor's training steps over one used only outside them (a set-up use such as a checkpoint load
// lasts as long as the host happens to take, and under load can outlast the steps: whether it is
// used in a step follows the program, its duration does not); then the one whose life matches the
// tensor's best, so that a long-lived neighbour whose extent was overestimated does not outvote the
// tensor's own sub-range.
bool outranks(const Ranking& a, const Ranking& b) {
    if (a.own != b.own) return a.own;
    if (a.in_step != b.in_step) return a.in_step;
    return a.life_match > b.life_match;
}

// The category of each byte of [lo, hi) in the segment over the tensor's life.
void attribute(const std::vector<Sub>& subs, uint64_t lo, uint64_t hi, const Life& life,
               const std::vector<std::pair<int64_t, int64_t>>& steps,
               std::vector<std::pair<int64_t, std::string>>& pieces) {
    std::vector<const Sub*> candidates;
    std::vector<uint64_t> cuts = {lo, hi};
    for (const Sub& s : subs) {
        if (s.offset >= hi || s.offset + uint64_t(s.bytes) <= lo || s.begin_ns > life.to || s.end_ns < life.from)
            continue;
        candidates.push_back(&s);
        cuts.push_back(std::clamp(s.offset, lo, hi));
        cuts.push_back(std::clamp(s.offset + uint64_t(s.bytes), lo, hi));
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
        const Sub* best = nullptr;
        Ranking best_rank;
        for (const Sub* s : candidates) {
            if (s->offset > cuts[i] || s->offset + uint64_t(s->bytes) < cuts[i + 1]) continue;
            const Ranking r = rank(*s, life, steps);
            if (!best || outranks(r, best_rank)) best = s, best_rank = r;
        }
        pieces.push_back({int64_t(cuts[i + 1] - cuts[i]), best ? best->category : "unattributed"});
    }
}

}  // namespace

void score_pooled_labels(const trace::Database& db, const std::vector<PooledLabel>& labels, AccuracyReport& report,
                         const std::vector<std::pair<int64_t, int64_t>>& training_steps) {
    const int64_t start = trace::read_run(db).start_monotonic_ns;
    std::vector<std::pair<int64_t, int64_t>> steps;  // on the trace's clock
    for (const auto& [begin, end] : training_steps) steps.push_back({begin - start, end - start});
    std::vector<Segment> segments;
    trace::AllocationRow a;
    for (trace::RowReader<trace::AllocationRow> rows(db); rows.next(a);)
        if (trace::is_device_memory(a.kind))
            segments.push_back({a.id, static_cast<uint64_t>(a.address), a.bytes, a.alloc_ns,
                                a.free_ns.value_or(INT64_MAX),
                                a.category.empty() ? "untagged" : std::string(a.category)});
    std::unordered_map<int64_t, std::vector<Sub>> subs;  // segment id -> its sub-ranges
    trace::SubrangeRow r;
    for (trace::RowReader<trace::SubrangeRow> rows(db); rows.next(r);)
        subs[r.allocation].push_back({static_cast<uint64_t>(r.offset), r.bytes, r.begin_ns, r.end_ns,
                                      r.category.empty() ? "untagged" : std::string(r.category)});
    for (const PooledLabel& label : labels) {
        const bool direct = label.allocation > 0;  // times already on the trace's clock
        int64_t from = direct ? label.alloc_time : label.alloc_time - start;
        int64_t to = label.free_time == INT64_MAX ? INT64_MAX : direct ? label.free_time : label.free_time - start;
        const int64_t after =
            direct || label.previous_free_time == INT64_MIN ? INT64_MIN : label.previous_free_time - start;
        ++report.labelled_allocations;
        if (direct)
            ++report.split_allocations;
        else
            ++report.pooled_labels;
        report.labelled_bytes += label.bytes;
        report.by_category[label.category].labelled_bytes += label.bytes;
        const auto holds = [](const Segment& g, uint64_t address) {
            return address >= g.address && address < g.address + uint64_t(std::max<int64_t>(g.bytes, 1));
        };
        const auto holding = [&](uint64_t address) {
            auto found = std::find_if(segments.begin(), segments.end(), [&](const Segment& g) {
                if (direct) return g.id == label.allocation;
                return holds(g, address) && g.alloc_ns <= from && g.free_ns >= from;
            });
            // The labeller's clock may run ahead of the trace's by a little (its times are converted
            // from one mark): a tensor labelled as made just before the segment holding its address
            // was allocated is in that segment, the first one there allocated while the tensor lives.
            if (found == segments.end() && !direct) {
                for (auto g = segments.begin(); g != segments.end(); ++g)
                    if (holds(*g, address) && g->alloc_ns > from && g->alloc_ns <= to &&
                        (found == segments.end() || g->alloc_ns < found->alloc_ns))
                        found = g;
            }
            return found;
        };
        auto segment = holding(label.address);
        if (segment == segments.end()) {
            ++report.unmatched_labels;
            continue;
        }
        // A tensor may run on into the next allocation when the two are mappings end to end in one
        // reservation (PyTorch's expandable segments): each part is scored in the allocation holding it.
        std::vector<std::pair<int64_t, std::string>> pieces;
        const uint64_t label_end = label.address + uint64_t(label.bytes);
        for (uint64_t address = label.address; address < label_end;) {
            const uint64_t segment_end = segment->address + uint64_t(std::max<int64_t>(segment->bytes, 1));
            auto next = direct || label_end <= segment_end ? segments.end() : holding(segment_end);
            const uint64_t end = next == segments.end() ? label_end : segment_end;
            const uint64_t lo = address - segment->address, hi = end - segment->address;
            auto found = subs.find(segment->id);
            if (found == subs.end())
                pieces.push_back({int64_t(hi - lo), segment->category});
            else
                attribute(found->second, lo, hi, Life{from, to, after}, steps, pieces);
            address = end;
            segment = next;
        }
        for (const auto& [bytes, category] : pieces) report.count(label.category, category, bytes);
    }
}

void set_previous_frees(std::vector<PooledLabel>& labels, const std::vector<PooledLabel>& tenants) {
    std::vector<const PooledLabel*> by_address;
    int64_t widest = 0;
    for (const PooledLabel& t : tenants)
        if (t.free_time != INT64_MAX) by_address.push_back(&t), widest = std::max(widest, t.bytes);
    std::sort(by_address.begin(), by_address.end(),
              [](const PooledLabel* a, const PooledLabel* b) { return a->address < b->address; });
    for (PooledLabel& label : labels) {
        if (label.allocation > 0) continue;  // a whole allocation: no tenant before it
        const uint64_t lowest = label.address > uint64_t(widest) ? label.address - uint64_t(widest) : 0;
        auto t = std::lower_bound(by_address.begin(), by_address.end(), lowest,
                                  [](const PooledLabel* a, uint64_t address) { return a->address < address; });
        for (; t != by_address.end() && (*t)->address < label.address + uint64_t(label.bytes); ++t) {
            const PooledLabel& tenant = **t;
            const bool itself = tenant.address == label.address && tenant.alloc_time == label.alloc_time;
            if (itself || tenant.address + uint64_t(tenant.bytes) <= label.address ||
                tenant.free_time > label.alloc_time)
                continue;
            label.previous_free_time = std::max(label.previous_free_time, tenant.free_time);
        }
    }
}

std::vector<int64_t> allocations_with_subranges(const trace::Database& db) {
    std::vector<int64_t> ids;
    trace::SubrangeRow r;
    for (trace::RowReader<trace::SubrangeRow> rows(db); rows.next(r);) ids.push_back(r.allocation);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

}  // namespace tbdprof::tagger
