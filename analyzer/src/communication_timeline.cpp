// The communication stretches a timeline draws: each rank's communication kernels split by whether
// computation ran on the same device at the time, over the whole run.
#include "tbdprof/analyzer/communication_timeline.h"

#include <climits>

#include "communication.h"

namespace tbdprof::analyzer {
namespace {

std::vector<std::pair<int64_t, int64_t>> as_pairs(const IntervalUnion& u) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    pairs.reserve(u.stretches().size());
    for (const Stretch& s : u.stretches()) pairs.emplace_back(s.begin, s.end);
    return pairs;
}

}  // namespace

std::vector<RankCommunicationStretches> communication_stretches(const std::string& path) {
    return read_trace(path, [](const TraceFile& trace) {
        std::vector<RankCommunicationStretches> out;
        const std::vector<bool> is_comm = communication_functions(trace);
        if (is_comm.empty()) return out;
        Window whole;
        whole.begin_ns = INT64_MIN / 4;  // every kernel the trace can hold (kMaxKernelNs bounds the rest)
        whole.end_ns = INT64_MAX / 4;
        std::vector<RankCommunication> ranks;
        for (const RankKernels& k : read_rank_kernels(trace, is_comm, whole)) {
            if (k.communication.empty()) continue;
            RankCommunicationStretches r;
            r.process = k.process;
            r.device = k.device;
            r.exposed_ns = as_pairs(k.communication.difference(k.computation));
            r.overlapped_ns = as_pairs(k.communication.intersection(k.computation));
            out.push_back(std::move(r));
            RankCommunication named;
            named.process = k.process;
            ranks.push_back(named);
        }
        std::optional<int64_t> world_size;
        read_ranks(trace, ranks, world_size);
        for (size_t i = 0; i < out.size(); ++i) out[i].rank = ranks[i].rank;
        return out;
    });
}

}  // namespace tbdprof::analyzer
