// Ranks of one trace compared: who waited in collectives for whom, and how unequal their work is.
#include <algorithm>
#include <string>

#include "communication.h"

namespace tbdprof::analyzer {
namespace {

double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A collective cannot finish on any rank before every rank has reached it, so a rank that starts its
// k-th collective before the last rank starts the same one waits for that difference (at most the
// kernel's own length). Collectives match by order: NCCL requires every rank to issue them in the
// same order, and a trace recorded from all ranks shares one clock.
bool add_waits(const std::vector<RankKernels>& kernels, CommunicationMetrics& m) {
    const size_t count = kernels.front().collectives.size();
    for (const RankKernels& k : kernels)
        if (k.collectives.size() != count) return false;
    std::vector<int64_t> wait(kernels.size(), 0);
    for (size_t c = 0; c < count; ++c) {
        int64_t latest = kernels.front().collectives[c].begin;
        for (const RankKernels& k : kernels) latest = std::max(latest, k.collectives[c].begin);
        for (size_t r = 0; r < kernels.size(); ++r) {
            const Stretch& own = kernels[r].collectives[c];
            wait[r] += std::clamp<int64_t>(latest - own.begin, 0, own.end - own.begin);
        }
    }
    for (size_t r = 0; r < kernels.size(); ++r) m.ranks[r].wait_ns = wait[r];
    return true;
}

// The rank whose lateness the others' waits measure: the least waiting one, if the waits differ at all
// (a tenth of the longest wait: equal ranks also wait a little for one another, by turns).
void find_waited_for(CommunicationMetrics& m) {
    const auto by_wait = [](const RankCommunication& a, const RankCommunication& b) { return *a.wait_ns < *b.wait_ns; };
    const auto least = std::min_element(m.ranks.begin(), m.ranks.end(), by_wait);
    const auto most = std::max_element(m.ranks.begin(), m.ranks.end(), by_wait);
    if (*most->wait_ns <= 0 || *most->wait_ns - *least->wait_ns <= *most->wait_ns / 10) return;
    m.waited_for = static_cast<size_t>(least - m.ranks.begin());
}

}  // namespace

void compare_ranks(const std::vector<RankKernels>& kernels, CommunicationMetrics& m, std::vector<std::string>& notes) {
    if (kernels.size() < 2) return;
    // Computation time is what a rank must do before its collectives can complete; waiting and
    // communication are the same on every rank of a synchronous job, so they say nothing of balance.
    std::vector<double> work;
    for (const RankCommunication& r : m.ranks) work.push_back(static_cast<double>(r.figures.computation_ns));
    const auto slowest = std::max_element(work.begin(), work.end());
    m.slowest = static_cast<size_t>(slowest - work.begin());
    const double median = median_of(work);
    if (median > 0) m.imbalance = *slowest / median;
    if (add_waits(kernels, m)) {
        find_waited_for(m);
    } else {
        notes.push_back(
            "the ranks ran different numbers of communication kernels in the window: the time each "
            "waited in collectives for the others is not reported");
    }
}

}  // namespace tbdprof::analyzer
