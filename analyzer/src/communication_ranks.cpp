// Ranks of one trace compared: who waited in collectives for whom, and how unequal their work is.
#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "communication.h"

namespace tbdprof::analyzer {
namespace {

double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A collective cannot finish on any rank before every rank of it has reached it, so a rank that
// starts a collective before the last member starts the same one waits for that difference (at most
// the kernel's own length); a trace recorded from all ranks shares one clock. `matched[r][k]`: the
// collective rank r's k-th communication kernel took part in, none when it is not compared. A rank
// that took part in none has no wait.
void add_waits(const std::vector<RankKernels>& kernels, const std::vector<std::vector<std::optional<size_t>>>& matched,
               size_t collectives, CommunicationMetrics& m) {
    std::vector<int64_t> latest(collectives, INT64_MIN);
    for (size_t r = 0; r < kernels.size(); ++r)
        for (size_t k = 0; k < matched[r].size(); ++k)
            if (matched[r][k])
                latest[*matched[r][k]] = std::max(latest[*matched[r][k]], kernels[r].collectives[k].begin);
    for (size_t r = 0; r < kernels.size(); ++r) {
        std::optional<int64_t> wait;
        for (size_t k = 0; k < matched[r].size(); ++k) {
            if (!matched[r][k]) continue;
            const Stretch& own = kernels[r].collectives[k];
            wait = wait.value_or(0) + std::clamp<int64_t>(latest[*matched[r][k]] - own.begin, 0, own.end - own.begin);
        }
        m.ranks[r].wait_ns = wait;
    }
}

// By order: NCCL requires every rank of a communicator to issue its collectives in the same order,
// so with one communicator the k-th kernels of all ranks are one collective. Refused (false) when the
// counts differ; an equal count shifted at both ends of the window, or several communicators, pair
// unrelated kernels: only for traces that name no communicator.
bool match_by_order(const std::vector<RankKernels>& kernels, CommunicationMetrics& m) {
    const size_t count = kernels.front().collectives.size();
    for (const RankKernels& k : kernels)
        if (k.collectives.size() != count) return false;
    std::vector<std::vector<std::optional<size_t>>> matched(kernels.size());
    for (auto& own : matched)
        for (size_t c = 0; c < count; ++c) own.emplace_back(c);
    add_waits(kernels, matched, count, m);
    for (RankCommunication& r : m.ranks) r.wait_ns = r.wait_ns.value_or(0);  // every rank compared, even over none
    m.waits.collectives = static_cast<int64_t>(count);
    return true;
}

// Each rank's identities, when every rank has them for exactly the kernels compared (the same rows
// read twice: always, unless the trace changed) and names a communicator; else none.
std::optional<std::vector<const RankIdentities*>> identities_of(const std::vector<RankKernels>& kernels,
                                                                const IdentitiesByRank& identities) {
    std::vector<const RankIdentities*> out;
    for (const RankKernels& k : kernels) {
        const auto found = identities.find({k.process, k.device});
        if (found == identities.end() || found->second.communicators.empty() ||
            found->second.begins_ns.size() != k.collectives.size())
            return std::nullopt;
        for (size_t i = 0; i < k.collectives.size(); ++i)
            if (found->second.begins_ns[i] != k.collectives[i].begin ||
                found->second.durations_ns[i] != k.collectives[i].end - k.collectives[i].begin)
                return std::nullopt;
        out.push_back(&found->second);
    }
    return out;
}

std::string left_out_text(const std::map<std::string, int64_t>& left_out) {
    std::string text;
    for (const auto& [why, count] : left_out) text += (text.empty() ? "" : "; ") + std::to_string(count) + " " + why;
    return text;
}

// By identity (communication_identity.cpp, as tbdprof fleet matches per-rank traces). False when
// nothing could be matched: a note says why.
bool match_by_identity(const std::vector<RankKernels>& kernels, const std::vector<const RankIdentities*>& ids,
                       CommunicationMetrics& m, std::vector<std::string>& notes) {
    const CollectiveMatch match = match_collectives(ids);
    m.waits.collectives = match.collectives;
    m.waits.communicators = match.communicators;
    m.waits.left_out = match.left_out;
    if (match.collectives == 0) {
        notes.push_back(
            "no collective ran in the window on every rank of its communicator: the time each rank "
            "waited in collectives is not reported" +
            (match.left_out.empty() ? std::string() : " (left out: " + left_out_text(match.left_out) + ")"));
        return false;
    }
    add_waits(kernels, match.of_rank, static_cast<size_t>(match.collectives), m);
    return true;
}

// The rank whose lateness the others' waits measure: the least waiting one, if the waits differ at all
// (a tenth of the longest wait: equal ranks also wait a little for one another, by turns).
// Ranks without a wait (none of their collectives compared) take no part.
void find_waited_for(CommunicationMetrics& m) {
    std::optional<size_t> least;
    int64_t most = 0;
    for (size_t r = 0; r < m.ranks.size(); ++r) {
        const std::optional<int64_t>& wait = m.ranks[r].wait_ns;
        if (!wait) continue;
        if (!least || *wait < *m.ranks[*least].wait_ns) least = r;
        most = std::max(most, *wait);
    }
    if (!least || most <= 0 || most - *m.ranks[*least].wait_ns <= most / 10) return;
    m.waited_for = least;
}

}  // namespace

void compare_ranks(const std::vector<RankKernels>& kernels, const IdentitiesByRank& identities, CommunicationMetrics& m,
                   std::vector<std::string>& notes) {
    if (kernels.size() < 2) return;
    // Computation time is what a rank must do before its collectives can complete; waiting and
    // communication are the same on every rank of a synchronous job, so they say nothing of balance.
    std::vector<double> work;
    for (const RankCommunication& r : m.ranks) work.push_back(static_cast<double>(r.figures.computation_ns));
    const auto slowest = std::max_element(work.begin(), work.end());
    m.slowest = static_cast<size_t>(slowest - work.begin());
    const double median = median_of(work);
    if (median > 0) m.imbalance = *slowest / median;
    const std::optional<std::vector<const RankIdentities*>> ids = identities_of(kernels, identities);
    m.waits.matched_by = ids ? "communicator and launch number" : "order";
    if (ids ? match_by_identity(kernels, *ids, m, notes) : match_by_order(kernels, m)) {
        find_waited_for(m);
    } else if (!ids) {
        notes.push_back(
            "the ranks ran different numbers of communication kernels in the window: the time each "
            "waited in collectives for the others is not reported");
    }
}

}  // namespace tbdprof::analyzer
