// Communication analysis over the window (communication.cpp), and the comparison of ranks
// (communication_ranks.cpp). Internal to the analyzer.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "interval_union.h"
#include "kernel_range_scan.h"
#include "tbdprof/analyzer/report.h"
#include "trace_file.h"

namespace tbdprof::analyzer {

// One rank's kernels inside the window: communication kernels as they ran (for matching collectives
// across ranks), and the unions of communication and computation.
struct RankKernels {
    int64_t process = 0, device = 0;
    std::vector<Stretch> collectives;  // communication kernels starting in the window, in start order
    IntervalUnion communication, computation;
};

// Functions whose name marks a communication kernel; empty: the trace has none, and nothing is scanned.
std::vector<bool> communication_functions(const TraceFile& trace);

// One device-timed kernel reaching into the window, as the communication passes read it.
struct WindowKernel {
    std::pair<int64_t, int64_t> rank;  // (process, device)
    Stretch whole;                     // [start, end) as it ran
    Stretch clipped;                   // the part inside the window
    bool communication = false;        // runs a function `is_comm` marks
};

// The window's device-timed kernels in id order (the order both communication passes rely on),
// without the rows no run has (the GPU scan names them in the notes; skipped, ends cannot overflow).
// `visit(const WindowKernel&)` returns false to stop; returns false when it did.
template <class Visit>
bool for_each_window_kernel(const TraceFile& trace, const std::vector<bool>& is_comm, const Window& window,
                            Visit&& visit) {
    trace::Statement rows(
        trace.db,
        "SELECT process, device, function, start_ns, duration_ns FROM kernels "
        "WHERE duration_ns IS NOT NULL AND duration_ns >= 0 AND start_ns < ?2 AND start_ns + duration_ns > ?1 "
        "ORDER BY id");
    rows.bind(1, window.begin_ns).bind(2, window.end_ns);
    while (rows.step()) {
        const int64_t function = rows.column_int(2), begin = rows.column_int(3), duration = rows.column_int(4);
        if (duration > kMaxKernelNs || begin < -kMaxKernelNs || begin > INT64_MAX - kMaxKernelNs) continue;
        const WindowKernel kernel{
            {rows.column_int(0), rows.column_int(1)},
            {begin, begin + duration},
            {std::max(begin, window.begin_ns), std::min(begin + duration, window.end_ns)},
            function >= 0 && static_cast<size_t>(function) < is_comm.size() && is_comm[static_cast<size_t>(function)]};
        if (!visit(kernel)) return false;
    }
    return true;
}

// Device-timed kernels that reach into the window, split by rank and kind.
std::vector<RankKernels> read_rank_kernels(const TraceFile& trace, const std::vector<bool>& is_comm,
                                           const Window& window);

// Ranks as recorded: the process_ranks table of a multi-process recording (the launcher's RANK and
// WORLD_SIZE per process) when the trace has one, else the rank an imported Kineto trace names
// (run note distributed.rank) for its one process.
void read_ranks(const TraceFile& trace, std::vector<RankCommunication>& ranks, std::optional<int64_t>& world_size);

// The figures of one union pair inside [lo, hi).
CommunicationFigures communication_figures(const RankKernels& rank, int64_t lo, int64_t hi);

using Spans = std::vector<std::pair<int64_t, int64_t>>;

// A rank's figures over the window and over each iteration span.
struct RankFigures {
    CommunicationFigures window;
    std::vector<CommunicationFigures> iterations;
    bool communicates = false;  // its communication union is not empty
};

// The figures communication_figures gives, from the unions of read_rank_kernels.
RankFigures rank_figures(const RankKernels& rank, const Window& window, const Spans& spans);

// The same figures (exactly) from one pass over the kernels that holds each rank's current stretch
// of communication, computation and both, not every kernel's interval: `kernels` gets the ranks of
// read_rank_kernels in its order, each with its collectives and without the unions, and `figures`
// theirs. False (and nothing filled) when a rank's kernels are not stored in start order or the
// spans (sorted, disjoint) are not: read_rank_kernels sorts.
bool sweep_rank_kernels(const TraceFile& trace, const std::vector<bool>& is_comm, const Window& window,
                        const Spans& spans, std::vector<RankKernels>& kernels, std::vector<RankFigures>& figures);

// Per rank (process, device), the communication kernels starting in the window as read_rank_kernels
// keeps them, each with its communicator and launch number (communication_identity.cpp).
struct RankIdentities {
    std::vector<CommunicatorInfo> communicators;
    std::vector<std::optional<CollectiveIdentity>> collectives;
    std::vector<int64_t> durations_ns;  // of those kernels: must equal the rank's collective durations
    std::vector<int64_t> begins_ns;     // and their starts (trace time): must equal the rank's collectives'
};
using IdentitiesByRank = std::map<std::pair<int64_t, int64_t>, RankIdentities>;  // by (process, device)
IdentitiesByRank collective_identities(const TraceFile& trace, const std::vector<bool>& is_comm, const Window& window);

// The collectives of several ranks matched by what every rank of their communicator names them:
// (communicator key, launch number, occurrence within the launch), the rules tbdprof fleet applies
// to per-rank traces (docs/fleet.md, "Waited in collectives"). A communicator counts when its members
// among the ranks are all of its ranks, each once; a collective when every member holds it.
struct CollectiveMatch {
    // Per rank (as given), per collective: the index of the collective it took part in, none when left out.
    std::vector<std::vector<std::optional<size_t>>> of_rank;
    int64_t collectives = 0;                  // distinct collectives matched
    int64_t communicators = 0;                // communicators held whole by the ranks
    std::map<std::string, int64_t> left_out;  // why -> collectives (kernels without an identity: kernels)
};
CollectiveMatch match_collectives(const std::vector<const RankIdentities*>& ranks);

// Across the ranks of one trace: the time each waited inside collectives for the others (matched by
// communicator and launch number where the trace names them, by order otherwise), the slowest rank
// and the imbalance. Notes what could not be compared.
void compare_ranks(const std::vector<RankKernels>& kernels, const IdentitiesByRank& identities,
                   CommunicationMetrics& metrics, std::vector<std::string>& notes);

}  // namespace tbdprof::analyzer
