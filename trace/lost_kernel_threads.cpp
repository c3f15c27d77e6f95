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
// The walk places every kernel, tied or lost, in id order at its thread's next launch and checks these
// facts at each step; a lost kernel tries the threads that lack one, the latest pending launch first
// (a thread whose pending launch is much older is likely held inside the call, its id still to come).
// A step that breaks a fact undoes the latest choice and tries the next thread. Threads that launch at
// once interleave their ids (one preempted between our hook and the driver gets its id hundreds of
// microseconds after its launch time), so one neighbour in id order proves nothing, which is why a
// rule of "the thread of its neighbours" paired 1 to 3 of 8 000 kernels with the wrong launch.
#include "lost_kernel_threads.h"

#include <algorithm>
#include <limits>

namespace tbdprof::trace::detail {
namespace {

// A kernel cannot start before it was launched. Tried exactly first (the simulated GPU and CUPTI with
// our clock agree exactly), then with the tolerance the rest of the builder allows between the clocks.
constexpr uint64_t kClockToleranceNs = 10'000;
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
// Steps the walk may take per kernel before it gives up (undone choices count).
constexpr size_t kStepsPerKernel = 64;
constexpr uint32_t kUnplaced = std::numeric_limits<uint32_t>::max();

struct Entry {
    const raw::RawDeviceActivity* d;
    uint32_t thread;  // index into Walk::tids; unused when lost
    bool lost;
};

struct Choice {
    size_t entry;
    std::vector<uint32_t> threads;  // candidates, in the order they are tried
    size_t tried = 0;
};

class Walk {
public:
    Walk(const RawProcess& raw, const std::unordered_map<uint32_t, std::vector<int64_t>>& launches_of_thread,
         const std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>>& by_thread,
         const std::vector<const raw::RawDeviceActivity*>& lost);
    // Places every entry; false when no placement keeps the facts within the step budget.
    bool run(uint64_t tolerance_ns);
    // The thread id of each lost entry, after a successful run.
    void hand_out(std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>>& by_thread) const;

private:
    uint64_t launch_ns(uint32_t t, size_t position) const;
    bool fits(uint32_t t, size_t at, bool lost) const;
    uint64_t upper_bound_ns(size_t at, uint32_t candidate) const;
    std::vector<uint32_t> candidates(size_t at) const;
    void place(uint32_t t, size_t at);
    void undo_to(size_t at);
    bool backtrack(size_t& at);

    const RawProcess& raw_;
    std::vector<uint32_t> tids_;  // thread index -> tid, ascending: a stable choice among equals
    std::vector<const std::vector<int64_t>*> launches_;
    std::vector<int64_t> lacking_;  // per thread: launches beyond its tied kernels
    std::vector<Entry> entries_;    // by correlation id
    // The walk's state: per thread, launches placed and lost kernels still lacking; per placed
    // entry, its thread and the latest launch time before it.
    std::vector<size_t> next_;
    std::vector<int64_t> missing_;
    std::vector<uint32_t> owner_;
    std::vector<uint64_t> latest_before_;
    uint64_t latest_ns_ = 0;
    uint64_t tolerance_ns_ = 0;
    std::vector<Choice> choices_;
};

Walk::Walk(const RawProcess& raw, const std::unordered_map<uint32_t, std::vector<int64_t>>& launches_of_thread,
           const std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>>& by_thread,
           const std::vector<const raw::RawDeviceActivity*>& lost)
    : raw_(raw) {
    static const std::vector<int64_t> none;
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
        for (const raw::RawDeviceActivity* d : records) entries_.push_back({d, t, false});
    }
    for (const raw::RawDeviceActivity* d : lost) entries_.push_back({d, 0, true});
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.d->correlation_id < b.d->correlation_id; });
}

uint64_t Walk::launch_ns(uint32_t t, size_t position) const {
    if (position >= launches_[t]->size()) return kNever;
    return raw_.launches[static_cast<size_t>((*launches_[t])[position])].record.ts_ns;
}

// Whether entry `at` may be thread t's next launch's kernel: same name, not before the launch, and its
// id given before the thread's next launch yet after every lower id's launch.
bool Walk::fits(uint32_t t, size_t at, bool lost) const {
    const size_t position = next_[t];
    if (position >= launches_[t]->size() || (lost && missing_[t] <= 0)) return false;
    const raw::RawDeviceActivity& d = *entries_[at].d;
    const raw::RawLaunch& launch = raw_.launches[static_cast<size_t>((*launches_[t])[position])].record;
    if (raw_.string(launch.name_string) != raw_.string(d.name_string)) return false;
    if (launch.ts_ns > d.start_ns + tolerance_ns_) return false;
    return latest_ns_ < launch_ns(t, position + 1) && (!lost || launch.ts_ns < upper_bound_ns(at, t));
}

// The time before which the lost entry `at` got its id, were it `candidate`'s: the next tied kernel
// above it got its id before its own thread's next launch, which is at most `lost_between` (+1 when
// that thread is the candidate) places further than the walk has reached.
uint64_t Walk::upper_bound_ns(size_t at, uint32_t candidate) const {
    size_t lost_between = 0;
    for (size_t i = at + 1; i < entries_.size(); ++i) {
        const Entry& e = entries_[i];
        if (e.lost) {
            ++lost_between;
            continue;
        }
        return launch_ns(e.thread, next_[e.thread] + lost_between + (e.thread == candidate ? 1 : 0) + 1);
    }
    return kNever;
}

std::vector<uint32_t> Walk::candidates(size_t at) const {
    std::vector<uint32_t> threads;
    for (uint32_t t = 0; t < tids_.size(); ++t)
        if (fits(t, at, true)) threads.push_back(t);
    std::stable_sort(threads.begin(), threads.end(),
                     [&](uint32_t a, uint32_t b) { return launch_ns(a, next_[a]) > launch_ns(b, next_[b]); });
    return threads;
}

void Walk::place(uint32_t t, size_t at) {
    owner_[at] = t;
    latest_before_[at] = latest_ns_;
    latest_ns_ = std::max(latest_ns_, launch_ns(t, next_[t]));
    ++next_[t];
    if (entries_[at].lost) --missing_[t];
}

// Takes back the placements of entries `at` and after (the walk is at `end`).
void Walk::undo_to(size_t at) {
    for (size_t i = at; i < entries_.size() && owner_[i] != kUnplaced; ++i) {
        const uint32_t t = owner_[i];
        --next_[t];
        if (entries_[i].lost) ++missing_[t];
        owner_[i] = kUnplaced;
    }
    latest_ns_ = latest_before_[at];
}

// Undoes back to the latest choice that has a thread left to try and places that one; false when
// no choice has.
bool Walk::backtrack(size_t& at) {
    while (!choices_.empty()) {
        Choice& choice = choices_.back();
        undo_to(choice.entry);
        if (++choice.tried < choice.threads.size()) {
            place(choice.threads[choice.tried], choice.entry);
            at = choice.entry + 1;
            return true;
        }
        choices_.pop_back();
    }
    return false;
}

bool Walk::run(uint64_t tolerance_ns) {
    tolerance_ns_ = tolerance_ns;
    next_.assign(tids_.size(), 0);
    missing_ = lacking_;
    owner_.assign(entries_.size(), kUnplaced);
    latest_before_.assign(entries_.size(), 0);
    latest_ns_ = 0;
    choices_.clear();
    const size_t budget = kStepsPerKernel * (entries_.size() + 1);
    size_t at = 0;
    for (size_t steps = 0; at < entries_.size(); ++steps) {
        if (steps > budget) return false;
        const Entry& e = entries_[at];
        if (!e.lost) {
            if (fits(e.thread, at, false)) {
                place(e.thread, at++);
            } else if (!backtrack(at)) {
                return false;
            }
            continue;
        }
        Choice choice{at, candidates(at)};
        if (choice.threads.empty()) {
            if (!backtrack(at)) return false;
            continue;
        }
        place(choice.threads.front(), at++);
        choices_.push_back(std::move(choice));
    }
    return true;
}

void Walk::hand_out(std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>>& by_thread) const {
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].lost) by_thread[tids_[owner_[i]]].push_back(entries_[i].d);
}

// The rule used when the walk finds no placement (records lost on the host side too, clocks further
// apart than the tolerance): a lost record whose two neighbours on each side in CUPTI order belong to
// one thread is that thread's; the others stay lost, for the intervals and the last resort.
void assign_by_neighbours(std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>>& by_thread,
                          std::vector<const raw::RawDeviceActivity*>& lost) {
    if (lost.empty() || by_thread.empty()) return;
    std::vector<std::pair<uint64_t, uint32_t>> tagged;  // (CUPTI id, thread), by id
    for (const auto& [tid, records] : by_thread)
        for (const raw::RawDeviceActivity* d : records) tagged.emplace_back(d->correlation_id, tid);
    std::sort(tagged.begin(), tagged.end());
    std::vector<const raw::RawDeviceActivity*> left;
    // Two neighbours on each side must agree: threads that launch at once interleave their CUPTI
    // ids, and a record of one thread can sit between two of another's.
    constexpr ptrdiff_t kNeighbours = 2;
    for (const raw::RawDeviceActivity* d : lost) {
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
        by_thread[tagged[static_cast<size_t>(first)].second].push_back(d);
    }
    lost = std::move(left);
}

}  // namespace

void assign_lost_to_threads(const RawProcess& raw,
                            const std::unordered_map<uint32_t, std::vector<int64_t>>& launches_of_thread,
                            std::map<uint32_t, std::vector<const raw::RawDeviceActivity*>>& by_thread,
                            std::vector<const raw::RawDeviceActivity*>& lost) {
    if (lost.empty()) return;
    Walk walk(raw, launches_of_thread, by_thread, lost);
    for (const uint64_t tolerance_ns : {uint64_t{0}, kClockToleranceNs}) {
        if (walk.run(tolerance_ns)) {
            walk.hand_out(by_thread);
            lost.clear();
            return;
        }
    }
    assign_by_neighbours(by_thread, lost);
}

}  // namespace tbdprof::trace::detail
