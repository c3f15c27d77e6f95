// Clock offsets from shared collectives: a collective cannot end on any rank before every rank has
// reached it, and NCCL makes every rank of a communicator issue the same collectives in the same order.
#include "merge_clock.h"

#include "tbdprof/trace/tables.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

namespace tbdprof::trace::merge {

namespace {

// Ends this close to the offset count as agreeing (the precision asked of the offset): the share
// that agrees tells how much the median can be trusted; the others are kernels that ended late.
constexpr int64_t kAgreementNs = 1000;

// library_calls.id -> the latest end of the timed kernels it launched (one scan of kernels).
std::unordered_map<int64_t, int64_t> call_kernel_ends(const Database& db) {
    std::unordered_map<int64_t, int64_t> ends;
    Statement rows(db,
                   "SELECT library_call, max(start_ns + duration_ns) FROM kernels "
                   "WHERE library_call IS NOT NULL AND duration_ns IS NOT NULL GROUP BY library_call");
    while (rows.step()) ends.emplace(rows.column_int(0), rows.column_int(1));
    return ends;
}

// Calls inside ncclGroupStart/End launch their kernel from ncclGroupEnd (a library call of its own,
// op 'nccl_group_end'): per (process, thread), the group ends that launched timed kernels, by time.
using GroupEnds = std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>>;
GroupEnds group_ends(const Database& db, const std::unordered_map<int64_t, int64_t>& ends) {
    GroupEnds groups;
    Statement rows(db,
                   "SELECT id, process, coalesce(thread, -1), begin_ns FROM library_calls "
                   "WHERE op = 'nccl_group_end' ORDER BY process, thread, begin_ns, id");
    while (rows.step()) {
        const auto end = ends.find(rows.column_int(0));
        // A nested group's inner end launches nothing: the outermost one launches for all.
        if (end != ends.end())
            groups[{rows.column_int(1), rows.column_int(2)}].emplace_back(rows.column_int(3), end->second);
    }
    return groups;
}

// The end of a grouped call: that of the first group end on its thread, at or after the call, that
// launched kernels. nullopt: none (the group never ended while recording).
std::optional<int64_t> grouped_end(const GroupEnds& groups, int64_t process, int64_t thread, int64_t begin_ns) {
    const auto found = groups.find({process, thread});
    if (found == groups.end()) return std::nullopt;
    const auto& list = found->second;
    const auto next =
        std::lower_bound(list.begin(), list.end(), std::pair{begin_ns, std::numeric_limits<int64_t>::min()});
    if (next == list.end()) return std::nullopt;
    return next->second;
}

bool sequences_agree(const CommunicatorSequence& a, const CommunicatorSequence& b) {
    if (a.nranks != b.nranks || a.collectives.empty() || b.collectives.empty()) return false;
    if (a.rank && b.rank && *a.rank == *b.rank) return false;  // the same rank twice is no pair
    // Recorded identities tell look-alike groups (one size, the same calls) apart.
    if (a.identity && b.identity && *a.identity != *b.identity) return false;
    const size_t common = std::min(a.collectives.size(), b.collectives.size());
    for (size_t i = 0; i < common; ++i)
        if (!a.collectives[i].same_call(b.collectives[i])) return false;
    return true;
}

}  // namespace

std::vector<CommunicatorSequence> read_collectives(const Database& db) {
    if (!has_table(db, "nccl_calls") || !has_table(db, "library_calls")) return {};
    const std::unordered_map<int64_t, int64_t> ends = call_kernel_ends(db);
    const GroupEnds groups = group_ends(db, ends);
    const bool has_identity = has_column(db, "nccl_calls", "communicator_identity");
    Statement rows(db, std::string("SELECT n.library_call, n.process, coalesce(n.communicator, 0), n.nranks, n.rank, "
                                   "n.op, n.datatype, n.count, coalesce(n.root, -1), coalesce(l.thread, -1), "
                                   "l.begin_ns, ") +
                           (has_identity ? "n.communicator_identity" : "NULL") +
                           " FROM nccl_calls n JOIN library_calls l ON l.id = n.library_call "
                           "WHERE n.op NOT IN ('send', 'recv') ORDER BY n.process, l.begin_ns, l.id");
    std::map<std::pair<int64_t, int64_t>, CommunicatorSequence> by_communicator;
    while (rows.step()) {
        const int64_t process = rows.column_int(1);
        const auto own = ends.find(rows.column_int(0));
        const std::optional<int64_t> end = own != ends.end()
                                               ? std::optional<int64_t>(own->second)
                                               : grouped_end(groups, process, rows.column_int(9), rows.column_int(10));
        if (!end) continue;
        CommunicatorSequence& sequence = by_communicator[{process, rows.column_int(2)}];
        sequence.process = process, sequence.communicator = rows.column_int(2);
        sequence.nranks = rows.column_optional_int(3), sequence.rank = rows.column_optional_int(4);
        sequence.identity = rows.column_optional_int(11);
        sequence.collectives.push_back(
            {rows.column_text(5), rows.column_text(6), rows.column_int(7), rows.column_int(8), *end});
    }
    std::vector<CommunicatorSequence> sequences;
    for (auto& [key, sequence] : by_communicator) sequences.push_back(std::move(sequence));
    return sequences;
}

std::optional<ClockMatch> match_clocks(const std::vector<CommunicatorSequence>& reference,
                                       const std::vector<CommunicatorSequence>& other) {
    std::vector<int64_t> differences_ns;
    ClockMatch match;
    for (const CommunicatorSequence& b : other) {
        for (const CommunicatorSequence& a : reference) {
            if (!sequences_agree(a, b)) continue;
            ++match.rank_pairs;
            const size_t common = std::min(a.collectives.size(), b.collectives.size());
            for (size_t i = 0; i < common; ++i)
                differences_ns.push_back(a.collectives[i].end_ns - b.collectives[i].end_ns);
        }
    }
    if (differences_ns.empty()) return std::nullopt;
    std::sort(differences_ns.begin(), differences_ns.end());
    const size_t n = differences_ns.size();
    // The median: robust to the few collectives whose ends differ (a rank's kernel delayed after the
    // collective completed); of an even count, the mean of the middle two.
    match.offset_ns = n % 2 == 1 ? differences_ns[n / 2]
                                 : differences_ns[n / 2 - 1] + (differences_ns[n / 2] - differences_ns[n / 2 - 1]) / 2;
    match.matched = static_cast<int64_t>(n);
    match.spread_ns = differences_ns.back() - differences_ns.front();
    match.agreeing = std::count_if(differences_ns.begin(), differences_ns.end(), [&](int64_t d) {
        return d >= match.offset_ns - kAgreementNs && d <= match.offset_ns + kAgreementNs;
    });
    return match;
}

}  // namespace tbdprof::trace::merge
