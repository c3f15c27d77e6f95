// Which thread launched a kernel whose CUPTI correlation record was lost. What is known, from CUPTI's
// documented semantics and our own records:
// - CUPTI numbers a thread's calls in the order it made them and the thread records its launches in
//   that order: with a thread's kernels sorted by correlation id, the k-th belongs to its k-th launch;
// - each thread lost exactly as many kernel records as it has launches beyond the kernels tied to it;
// - a kernel does not start before its launch;
// - CUPTI gives a call its id inside the call: after our hook read the launch's time and before the
//   same thread's next launch read its own. So when ids are walked in order, an id is given after the
//   launch time of every lower id, and before its own thread's next launch: a thread whose next launch
//   came before some lower id's launch cannot own it.
// The walk places every kernel, tied or lost, in id order at its thread's next launch and keeps only
// placements that respect these facts (a kernel that fits no placement, its launch unseen say, is
// skipped and left to the rules after). A lost kernel may go to any thread that lacks one and fits, so
// the walk follows every such choice at once; placements that reach the same state (how many launches
// of each thread are placed, which is all the facts depend on) are merged, keeping the preferred
// history: the thread whose pending launch is the oldest first. When two threads are inside their
// launch calls at once and the GPU runs the kernels back to back, both ways fit every fact, and the
// preference decides: oldest first gave a lost kernel another thread's launch in 16 of 210 runs (2 to
// 7 kernels), latest first in 20 of 210 (2 to 22). Threads that launch at once interleave their ids
// (one preempted between our hook and the driver gets its id hundreds of microseconds after its launch
// time), so one neighbour in id order proves nothing: the rule "the thread of its neighbours" it
// replaces left 1 to 3 of 8 000 kernels without their launch in about one run in six.
#include "lost_kernel_threads.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_set>

namespace tbdprof::trace::detail {
namespace {

// A kernel cannot start before it was launched. Tried exactly first (the simulated GPU and CUPTI with
// our clock agree exactly), then with the tolerance the rest of the builder allows between the clocks.
constexpr uint64_t kClockToleranceNs = 10'000;
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
// The most states followed at once; past it the least preferred are given up (8 threads x 1 000
// launches with every 7th correlation record lost: at most 92 at once in 226 runs, mostly 1 or 2).
// And the most placements tried in all, so that many threads launching at once cannot make the build
// slow: past it the walk gives up and the neighbour rule decides.
constexpr size_t kMaxStates = 1024;
constexpr size_t kMaxPlacementsTried = 50'000'000;

struct Entry {
    const DeviceKernel* d;
    uint32_t thread;  // index into Walk::tids_; unused when lost
    bool lost;
};

// Where the walk stands: per thread, how many of its launches are placed; the latest launch time
// placed; the choice that led here (index into Walk::nodes_, -1: none yet).
struct State {
    std::vector<uint32_t> next;
    uint64_t latest_ns = 0;
    int64_t node = -1;
};

// One choice: lost entry `entry` went to thread `thread`, after the choices of node `parent`.
struct Node {
    int64_t parent;
    uint32_t entry;
    uint32_t thread;
};

class Walk {
public:
    Walk(const RawProcess& raw, const std::unordered_map<uint32_t, std::vector<LaunchIndex>>& launches_of_thread,
         const KernelsOfThread& by_thread, const std::vector<const DeviceKernel*>& lost);
    // Places every entry it can; returns how many it skipped (no placement kept the facts: a launch
    // the hooks did not see, say), or nullopt when it gave up (kMaxPlacementsTried).
    std::optional<size_t> run(uint64_t tolerance_ns, bool compare_names);
    size_t size() const { return entries_.size(); }
    // Gives each lost entry the run placed to its thread; the others stay in `lost`.
    void hand_out(KernelsOfThread& by_thread, std::vector<const DeviceKernel*>& lost) const;

private:
    uint64_t launch_ns(uint32_t t, size_t position) const;
    bool fits(const State& s, uint32_t t, size_t at) const;
    uint64_t upper_bound_ns(const State& s, size_t at, uint32_t candidate) const;
    bool step_tied(size_t at, std::vector<State>& states) const;
    bool step_lost(size_t at, std::vector<State>& states);
    State place(const State& s, uint32_t t) const;

    const RawProcess& raw_;
    std::vector<uint32_t> tids_;  // thread index -> tid, ascending: a stable choice among equals
    std::vector<const std::vector<LaunchIndex>*> launches_;
    std::vector<int64_t> lacking_;      // per thread: launches beyond its tied kernels
    std::vector<int64_t> lacking_now_;  // the same, plus its tied kernels the run skipped
    std::vector<Entry> entries_;        // by correlation id
    std::vector<size_t> next_tied_;     // per entry: the first tied entry after it, or entries_.size()
    std::vector<uint32_t> tied_seen_;   // per thread: its tied entries the walk has passed
    std::vector<Node> nodes_;
    size_t tried_ = 0;  // placements tried for lost entries, against kMaxPlacementsTried
    int64_t result_ = -1;
    uint64_t tolerance_ns_ = 0;
    bool compare_names_ = true;
};

Walk::Walk(const RawProcess& raw, const std::unordered_map<uint32_t, std::vector<LaunchIndex>>& launches_of_thread,
           const KernelsOfThread& by_thread, const std::vector<const DeviceKernel*>& lost)
    : raw_(raw) {
    static const std::vector<LaunchIndex> none;
    std::map<uint32_t, uint32_t> index_of;
    for (const auto& [tid, launches] : launches_of_thread) index_of.emplace(tid, 0);
    for (const auto& [tid, records] : by_thread) index_of.emplace(tid, 0);
    for (auto& [tid, index] : index_of) {
        index = static_cast<uint32_t>(tids_.size());
        tids_.push_back(tid);
        const auto it = launches_of_thread.find(tid);
        launches_.push_back(it == launches_of_thread.end() ? &none : &it->second);
        lacking_.push_back(static_cast<int64_t>(launches_.back()->size()));
    }
    for (const auto& [tid, records] : by_thread) {
        const uint32_t t = index_of.at(tid);
        lacking_[t] -= static_cast<int64_t>(records.size());
        for (const KernelIndex i : records) entries_.push_back({&raw.device_kernels[i], t, false});
    }
    for (const DeviceKernel* d : lost) entries_.push_back({d, 0, true});
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.d->correlation_id < b.d->correlation_id; });
    // Looked up for every lost entry tried: a scan from each to the next tied one made a run whose
    // records were all lost quadratic (100 000 kernels took 12 s to build, 200 000 about 100 s).
    next_tied_.assign(entries_.size(), entries_.size());
    for (size_t i = entries_.size(); i-- > 1;) next_tied_[i - 1] = entries_[i].lost ? next_tied_[i] : i;
}

uint64_t Walk::launch_ns(uint32_t t, size_t position) const {
    if (position >= launches_[t]->size()) return kNever;
    return raw_.launches[static_cast<size_t>((*launches_[t])[position])].record.host_ns;
}

// Whether entry `at` may be thread t's next launch's kernel in state s: t still lacks a kernel (lost
// entries), same name, not before the launch, and its id given before the thread's next launch yet
// after every lower id's launch (and, lost, before the next tied kernel's bound).
bool Walk::fits(const State& s, uint32_t t, size_t at) const {
    const size_t position = s.next[t];
    const Entry& e = entries_[at];
    if (position >= launches_[t]->size()) return false;
    if (e.lost && static_cast<int64_t>(position) - tied_seen_[t] >= lacking_now_[t]) return false;
    const raw::RawLaunch launch = raw_.launches[static_cast<size_t>((*launches_[t])[position])].record;
    if (compare_names_ && raw_.string(launch.name_string) != raw_.string(e.d->name_string)) return false;
    if (launch.host_ns > e.d->start_host_ns + tolerance_ns_) return false;
    return s.latest_ns < launch_ns(t, position + 1) && (!e.lost || launch.host_ns < upper_bound_ns(s, at, t));
}

// The time before which the lost entry `at` got its id, were it `candidate`'s: the next tied kernel
// above it got its id before its own thread's next launch, which is at most `lost_between` (+1 when
// that thread is the candidate) places further than state s has reached.
uint64_t Walk::upper_bound_ns(const State& s, size_t at, uint32_t candidate) const {
    const size_t tied = next_tied_[at];
    if (tied == entries_.size()) return kNever;
    const size_t lost_between = tied - at - 1;
    const uint32_t t = entries_[tied].thread;
    return launch_ns(t, s.next[t] + lost_between + (t == candidate ? 1 : 0) + 1);
}

State Walk::place(const State& s, uint32_t t) const {
    State after = s;
    after.latest_ns = std::max(after.latest_ns, launch_ns(t, after.next[t]));
    ++after.next[t];
    return after;
}

// A tied entry has one place: states where it does not fit end. False, states unchanged, when it
// fits none.
bool Walk::step_tied(size_t at, std::vector<State>& states) const {
    const uint32_t t = entries_[at].thread;
    std::vector<State> kept;
    kept.reserve(states.size());
    for (const State& s : states)
        if (fits(s, t, at)) kept.push_back(place(s, t));
    if (kept.empty()) return false;
    states = std::move(kept);
    return true;
}

// A lost entry: every thread that fits, the oldest pending launch first; equal states merged, the
// first (preferred) history kept. False, states unchanged, when no thread fits any state.
bool Walk::step_lost(size_t at, std::vector<State>& states) {
    std::vector<State> after;
    std::map<std::vector<uint32_t>, bool> seen;
    for (const State& s : states) {
        std::vector<uint32_t> threads;
        tried_ += tids_.size();
        for (uint32_t t = 0; t < tids_.size(); ++t)
            if (fits(s, t, at)) threads.push_back(t);
        std::stable_sort(threads.begin(), threads.end(),
                         [&](uint32_t a, uint32_t b) { return launch_ns(a, s.next[a]) < launch_ns(b, s.next[b]); });
        for (const uint32_t t : threads) {
            State next = place(s, t);
            if (!seen.emplace(next.next, true).second || after.size() >= kMaxStates) continue;
            nodes_.push_back({s.node, static_cast<uint32_t>(at), t});
            next.node = static_cast<int64_t>(nodes_.size() - 1);
            after.push_back(std::move(next));
        }
    }
    if (after.empty()) return false;
    states = std::move(after);
    return true;
}

std::optional<size_t> Walk::run(uint64_t tolerance_ns, bool compare_names) {
    tolerance_ns_ = tolerance_ns;
    compare_names_ = compare_names;
    tied_seen_.assign(tids_.size(), 0);
    lacking_now_ = lacking_;
    nodes_.clear();
    tried_ = 0;
    std::vector<State> states(1);
    states.front().next.assign(tids_.size(), 0);
    size_t skipped = 0;
    for (size_t at = 0; at < entries_.size(); ++at) {
        if (tried_ > kMaxPlacementsTried) return std::nullopt;
        const Entry& e = entries_[at];
        if (e.lost) {
            skipped += step_lost(at, states) ? 0 : 1;
        } else if (step_tied(at, states)) {
            ++tied_seen_[e.thread];
        } else {
            ++skipped;
            ++lacking_now_[e.thread];  // its launch is missing: one slot fewer taken by tied kernels
        }
    }
    result_ = states.front().node;
    return skipped;
}

void Walk::hand_out(KernelsOfThread& by_thread, std::vector<const DeviceKernel*>& lost) const {
    std::unordered_set<const DeviceKernel*> placed;
    for (int64_t n = result_; n >= 0; n = nodes_[static_cast<size_t>(n)].parent) {
        const Node& node = nodes_[static_cast<size_t>(n)];
        by_thread[tids_[node.thread]].push_back(
            static_cast<KernelIndex>(entries_[node.entry].d - raw_.device_kernels.data()));
        placed.insert(entries_[node.entry].d);
    }
    std::erase_if(lost, [&](const DeviceKernel* d) { return placed.contains(d); });
}

// The rule used when the walk gives up (kMaxPlacementsTried): a lost record whose two neighbours on
// each side in CUPTI order belong to one thread is that thread's; the others stay lost, for the
// intervals and the last resort.
void assign_by_neighbours(const RawProcess& raw, KernelsOfThread& by_thread, std::vector<const DeviceKernel*>& lost) {
    if (lost.empty() || by_thread.empty()) return;
    std::vector<std::pair<uint64_t, uint32_t>> tagged;  // (CUPTI id, thread), by id
    for (const auto& [tid, records] : by_thread)
        for (const KernelIndex i : records) tagged.emplace_back(raw.device_kernels[i].correlation_id, tid);
    std::sort(tagged.begin(), tagged.end());
    std::vector<const DeviceKernel*> left;
    // Two neighbours on each side must agree: threads that launch at once interleave their CUPTI
    // ids, and a record of one thread can sit between two of another's.
    constexpr ptrdiff_t kNeighbours = 2;
    for (const DeviceKernel* d : lost) {
        const auto next = std::lower_bound(tagged.begin(), tagged.end(), std::make_pair(d->correlation_id, 0u));
        const ptrdiff_t at = next - tagged.begin();
        const ptrdiff_t first = std::max<ptrdiff_t>(0, at - kNeighbours);
        const ptrdiff_t last = std::min<ptrdiff_t>(static_cast<ptrdiff_t>(tagged.size()), at + kNeighbours);
        bool agree = first < last;
        for (ptrdiff_t i = first; agree && i < last; ++i)
            agree = tagged[static_cast<size_t>(i)].second == tagged[static_cast<size_t>(first)].second;
        if (!agree) {
            left.push_back(d);  // among several threads' kernels: the intervals decide
            continue;
        }
        by_thread[tagged[static_cast<size_t>(first)].second].push_back(
            static_cast<KernelIndex>(d - raw.device_kernels.data()));
    }
    lost = std::move(left);
}

}  // namespace

void assign_lost_to_threads(const RawProcess& raw,
                            const std::unordered_map<uint32_t, std::vector<LaunchIndex>>& launches_of_thread,
                            KernelsOfThread& by_thread, std::vector<const DeviceKernel*>& lost) {
    if (lost.empty()) return;
    Walk walk(raw, launches_of_thread, by_thread, lost);
    // Exact clocks first, then the tolerance; names compared unless they disagree for most kernels (a
    // CUPTI that spells them differently from cuFuncGetName). The try that skips fewest is used.
    struct Try {
        uint64_t tolerance_ns;
        bool compare_names;
    };
    constexpr Try kTries[] = {{0, true}, {kClockToleranceNs, true}, {kClockToleranceNs, false}};
    std::optional<size_t> best;
    size_t best_try = 0, last_try = 0;
    for (size_t i = 0; i < std::size(kTries) && !(best && *best == 0); ++i) {
        if (i == 2 && best && *best * 2 < walk.size()) break;  // names mostly agree: keep comparing them
        const std::optional<size_t> skipped = walk.run(kTries[i].tolerance_ns, kTries[i].compare_names);
        last_try = i;
        if (skipped && (!best || *skipped < *best)) best = skipped, best_try = i;
    }
    if (!best) return assign_by_neighbours(raw, by_thread, lost);
    if (best_try != last_try) walk.run(kTries[best_try].tolerance_ns, kTries[best_try].compare_names);
    walk.hand_out(by_thread, lost);
}

}  // namespace tbdprof::trace::detail
