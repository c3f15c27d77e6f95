// Gradient buckets, the P3 view: per all-reduce or reduce-scatter whose input holds gradients, when its
// last gradient was written, when it ran, the slack between, and whether the first use of its result
// waited for it; per round of buckets, a bound on what perfect overlap would save (docs/analyzer.md,
// "Gradient buckets (P3)").
#include <algorithm>
#include <climits>
#include <set>

#include "communication_buckets.h"

namespace tbdprof::analyzer {
namespace {

bool in_range(const BufferAccess& use, int64_t offset, int64_t bytes) {
    return use.offset >= offset && use.offset < offset + std::max<int64_t>(bytes, 1);
}

const std::vector<BufferAccess>* uses_of(const BucketInputs& inputs, int64_t allocation) {
    const auto found = inputs.accesses.find(allocation);
    return found == inputs.accesses.end() ? nullptr : &found->second;
}

struct Writes {
    std::optional<int64_t> first_end_ns, last_end_ns;
    bool all_from_gradients = true;  // every write copied gradients (true when there is none)
};

// Writes into the collective's input that began in [lower, start): the gradients going into it.
Writes writes_before(const BucketInputs& inputs, const CollectiveCall& c, int64_t lower) {
    Writes w;
    const std::vector<BufferAccess>* uses = uses_of(inputs, c.input_allocation);
    if (!uses) return w;
    auto it =
        std::partition_point(uses->begin(), uses->end(), [lower](const BufferAccess& u) { return u.begin_ns < lower; });
    for (; it != uses->end() && it->begin_ns < c.start_ns; ++it) {
        if (!it->write || !in_range(*it, c.input_offset, c.input_bytes)) continue;
        w.all_from_gradients = w.all_from_gradients && it->from_gradients;
        w.first_end_ns = std::min(w.first_end_ns.value_or(INT64_MAX), it->end_ns);
        w.last_end_ns = std::max(w.last_end_ns.value_or(INT64_MIN), it->end_ns);
    }
    return w;
}

// The first kernel or copy using the collective's output from its start on.
const BufferAccess* next_use(const BucketInputs& inputs, const CollectiveCall& c) {
    const std::vector<BufferAccess>* uses = uses_of(inputs, c.output_allocation);
    if (!uses) return nullptr;
    auto it = std::partition_point(uses->begin(), uses->end(),
                                   [&c](const BufferAccess& u) { return u.begin_ns < c.start_ns; });
    for (; it != uses->end(); ++it)
        if (in_range(*it, c.output_offset, c.output_bytes)) return &*it;
    return nullptr;
}

// How long the use's stream sat idle before the use, until the collective's end: from the end of the
// stream's last other kernel before it (its launch when there is none) to the use's start or the
// collective's end, whichever is first.
int64_t waited_for(const BufferAccess& use, const CollectiveCall& c, const std::vector<Stretch>& stream) {
    const auto before =
        std::partition_point(stream.begin(), stream.end(), [&use](const Stretch& k) { return k.begin < use.begin_ns; });
    const int64_t ready = before == stream.begin() ? use.launch_ns : std::prev(before)->end;
    return std::max<int64_t>(0, std::min(use.begin_ns, c.end_ns) - ready);
}

// "gradients tag", "copies of gradients", or empty: the tags do not say the input holds gradients.
std::string identify(const CollectiveCall& c, const Writes& writes) {
    if (c.input_category == "gradients") return "gradients tag";
    if (c.input_allocation >= 0 && writes.last_end_ns && writes.all_from_gradients) return "copies of gradients";
    return {};
}

struct Candidate {
    const CollectiveCall* call;
    Writes writes;
    std::string identified_by;
};

// Each collective with the writes into its input since the previous collective on the same input
// (buffers are per process) and what identifies it as a bucket.
std::vector<Candidate> candidates(const BucketInputs& inputs) {
    std::map<std::pair<int64_t, int64_t>, int64_t> previous_end;  // (allocation, offset) -> end
    std::vector<Candidate> out;
    for (const CollectiveCall& c : inputs.collectives) {
        const auto key = std::make_pair(c.input_allocation, c.input_offset);
        const auto found = previous_end.find(key);
        const int64_t lower = found == previous_end.end() ? INT64_MIN : found->second;
        Candidate candidate{&c, writes_before(inputs, c, lower), {}};
        candidate.identified_by = identify(c, candidate.writes);
        out.push_back(std::move(candidate));
        if (c.input_allocation >= 0) previous_end[key] = c.end_ns;
    }
    return out;
}

// Spans are sorted and do not overlap: the last one beginning at or before t is the only candidate.
std::optional<int64_t> iteration_of(const Report& report, int64_t t) {
    const auto& spans = report.iterations.spans;
    const auto after = std::partition_point(spans.begin(), spans.end(), [t](const auto& s) { return s.first <= t; });
    if (after == spans.begin() || t >= std::prev(after)->second) return std::nullopt;
    return static_cast<int64_t>(std::prev(after) - spans.begin());
}

const RankKernels* rank_kernels(const std::vector<RankKernels>& kernels, int64_t process, int64_t device) {
    for (const RankKernels& k : kernels)
        if (k.process == process && k.device == device) return &k;
    return nullptr;
}

std::optional<int64_t> rank_number(const CommunicationMetrics& m, int64_t process, int64_t device) {
    for (const RankCommunication& r : m.ranks)
        if (r.process == process && r.device == device) return r.rank;
    return std::nullopt;
}

GradientBucket bucket_of(const Candidate& candidate, const RankKernels* rank, const Report& report) {
    const CollectiveCall& c = *candidate.call;
    GradientBucket b;
    b.process = c.process;
    b.device = c.device;
    b.rank = rank_number(report.communication, c.process, c.device);
    b.iteration = iteration_of(report, c.start_ns);
    b.op = c.op;
    b.bytes = c.input_bytes;
    b.identified_by = candidate.identified_by;
    b.first_gradient_write_end_ns = candidate.writes.first_end_ns;
    b.last_gradient_write_end_ns = candidate.writes.last_end_ns;
    b.start_ns = c.start_ns;
    b.end_ns = c.end_ns;
    const int64_t lo = std::max(c.start_ns, report.window.begin_ns), hi = std::min(c.end_ns, report.window.end_ns);
    b.exposed_ns = std::max<int64_t>(0, hi - lo) - (rank ? rank->computation.measure(lo, hi) : 0);
    return b;
}

// A rank's rounds, counted from its first bucket in the run: a round ends before a buffer repeats.
struct RoundCounter {
    std::set<std::pair<int64_t, int64_t>> seen;  // (allocation, offset) of the round's inputs
    int64_t round = 0, position = 0;
    void next(const CollectiveCall& c, GradientBucket& b) {
        if (!seen.insert({c.input_allocation, c.input_offset}).second) {
            seen = {{c.input_allocation, c.input_offset}};
            ++round;
            position = 0;
        }
        b.round = round;
        b.position = position++;
    }
};

BucketRound round_of(const std::vector<GradientBucket>& buckets, size_t first, size_t last, const RankKernels* rank,
                     const Window& window) {
    BucketRound r;
    r.rank = buckets[first].rank;
    r.process = buckets[first].process;
    r.device = buckets[first].device;
    r.round = buckets[first].round;
    r.buckets = static_cast<int64_t>(last - first);
    std::vector<Stretch> collectives, after_arrival;
    for (size_t i = first; i < last; ++i) {
        const GradientBucket& b = buckets[i];
        collectives.push_back({b.start_ns, b.end_ns});
        after_arrival.push_back({b.start_ns + b.wait_ns.value_or(0), b.end_ns});
        if (b.first_gradient_write_end_ns)
            r.first_gradient_write_end_ns =
                std::min(r.first_gradient_write_end_ns.value_or(INT64_MAX), *b.first_gradient_write_end_ns);
        if (b.last_gradient_write_end_ns)
            r.last_gradient_write_end_ns =
                std::max(r.last_gradient_write_end_ns.value_or(INT64_MIN), *b.last_gradient_write_end_ns);
    }
    const IntervalUnion reduced(std::move(collectives));
    const IntervalUnion none;
    const IntervalUnion& computation = rank ? rank->computation : none;
    const auto exposed = [&](const IntervalUnion& u) {
        return u.measure(window.begin_ns, window.end_ns) - u.shared(computation, window.begin_ns, window.end_ns);
    };
    r.exposed_ns = exposed(reduced);
    r.exposed_after_arrival_ns = exposed(IntervalUnion(std::move(after_arrival)));
    if (r.first_gradient_write_end_ns && r.last_gradient_write_end_ns) {
        const int64_t lo = *r.first_gradient_write_end_ns, hi = *r.last_gradient_write_end_ns;
        const IntervalUnion& communication = rank ? rank->communication : none;
        r.spare_computation_ns = computation.measure(lo, hi) - computation.shared(communication, lo, hi);
    }
    // Waiting for a late rank is no communication that overlap could hide: left out of the bound.
    r.savings_bound_ns = std::min(r.exposed_after_arrival_ns, r.spare_computation_ns);
    return r;
}

std::string unidentified_note(const std::map<std::string, int64_t>& by_category, int64_t count) {
    std::string categories;
    for (const auto& [category, n] : by_category)
        categories += (categories.empty() ? "" : ", ") + (category.empty() ? std::string("untagged") : category) + " " +
                      std::to_string(n);
    return std::to_string(count) +
           " all-reduce and reduce-scatter calls in the window are not gradient buckets as far " +
           "as the tags tell (their input buffers: " + categories +
           "; neither tagged gradients nor written by copies of gradient-tagged memory): the per-bucket (P3) view " +
           "leaves them out";
}

using RankKey = std::pair<int64_t, int64_t>;  // process, device

// A bucket (the index-th of its rank) whose result was used: the use and the collective.
struct PendingUse {
    RankKey rank;
    size_t index = 0;
    BufferAccess use;
    const CollectiveCall* call = nullptr;
};

// The time each bucket's next use waited for its collective, from the kernels of the uses' streams.
void add_waits(const TraceFile& trace, const std::vector<bool>& is_comm, const std::vector<PendingUse>& pending,
               std::map<RankKey, std::vector<GradientBucket>>& by_rank) {
    std::set<std::pair<int64_t, int64_t>> streams;
    for (const PendingUse& p : pending) streams.insert({p.use.process, p.use.stream});
    const auto by_stream = read_stream_kernels(trace, is_comm, {streams.begin(), streams.end()});
    for (const PendingUse& p : pending)
        by_rank[p.rank][p.index].next_use_waited_ns =
            waited_for(p.use, *p.call, by_stream.at({p.use.process, p.use.stream}));
}

// Every rank reduces its buckets in the same order, so a bucket's round and place name the same collective
// on each (NCCL requires one order of collectives): it cannot proceed before the last rank's start.
void add_rank_waits(const std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>>& starts, size_t ranks,
                    std::map<RankKey, std::vector<GradientBucket>>& by_rank) {
    if (ranks < 2) return;
    for (auto& [key, buckets] : by_rank)
        for (GradientBucket& b : buckets) {
            const std::vector<int64_t>& all = starts.at({b.round, b.position});
            if (all.size() != ranks) continue;
            const int64_t latest = *std::max_element(all.begin(), all.end());
            b.wait_ns = std::clamp<int64_t>(latest - b.start_ns, 0, b.end_ns - b.start_ns);
        }
}

// Rounds of each rank's buckets, then every bucket in rank order.
void add_rounds(std::map<RankKey, std::vector<GradientBucket>>& by_rank, const std::vector<RankKernels>& kernels,
                const Window& window, CommunicationMetrics& m) {
    for (auto& [key, buckets] : by_rank) {
        const RankKernels* rank = rank_kernels(kernels, key.first, key.second);
        for (size_t first = 0; first < buckets.size();) {
            size_t last = first;
            while (last < buckets.size() && buckets[last].round == buckets[first].round) ++last;
            m.bucket_rounds.push_back(round_of(buckets, first, last, rank, window));
            first = last;
        }
        m.buckets.insert(m.buckets.end(), buckets.begin(), buckets.end());
    }
}

void add_notes(const BucketInputs& inputs, const std::map<std::string, int64_t>& unidentified, Report& report) {
    if (report.communication.unidentified_collectives > 0)
        report.notes.push_back(unidentified_note(unidentified, report.communication.unidentified_collectives));
    if (inputs.grouped > 0)
        report.notes.push_back(
            std::to_string(inputs.grouped) +
            " all-reduce and reduce-scatter calls ran inside NCCL groups (one kernel for the group): "
            "the per-bucket (P3) view leaves them out");
}

}  // namespace

void scan_buckets(const TraceFile& trace, const std::vector<bool>& is_comm,
                  const std::function<std::vector<RankKernels>()>& read_kernels, Report& report) {
    const BucketInputs inputs = read_bucket_inputs(trace, is_comm);
    CommunicationMetrics& m = report.communication;
    if (!inputs.missing.empty()) {
        if (m.present) report.notes.push_back("no per-bucket (P3) view: " + inputs.missing);
        return;
    }
    const std::vector<RankKernels> kernels = read_kernels();
    std::map<RankKey, std::vector<GradientBucket>> by_rank;
    std::map<RankKey, RoundCounter> rounds;
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> starts;  // (round, position) -> every rank's start
    std::map<std::string, int64_t> unidentified;
    std::vector<PendingUse> uses;
    for (const Candidate& candidate : candidates(inputs)) {
        const CollectiveCall& c = *candidate.call;
        const bool in_window = c.start_ns >= report.window.begin_ns && c.start_ns < report.window.end_ns;
        if (candidate.identified_by.empty()) {
            if (in_window) ++unidentified[c.input_category], ++m.unidentified_collectives;
            continue;
        }
        GradientBucket bucket = bucket_of(candidate, rank_kernels(kernels, c.process, c.device), report);
        rounds[{c.process, c.device}].next(c, bucket);  // counted over the run: a window may begin mid-round
        starts[{bucket.round, bucket.position}].push_back(bucket.start_ns);
        if (!in_window) continue;
        std::vector<GradientBucket>& rank = by_rank[{c.process, c.device}];
        rank.push_back(std::move(bucket));
        if (const BufferAccess* use = next_use(inputs, c)) {
            rank.back().next_use_start_ns = use->begin_ns;
            uses.push_back({{c.process, c.device}, rank.size() - 1, *use, &c});
        }
    }
    add_notes(inputs, unidentified, report);
    add_waits(trace, is_comm, uses, by_rank);
    add_rank_waits(starts, rounds.size(), by_rank);
    add_rounds(by_rank, kernels, report.window, m);
}

}  // namespace tbdprof::analyzer
