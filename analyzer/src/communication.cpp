// Communication against computation, per rank (a process and device with communication kernels)
// over the window and each of its iterations. Communication kernels are NCCL's (their names begin
// with "nccl", in any case, after a demangled "void "; NCCL names its kernels ncclKernel_* and
// ncclDevKernel_*); computation is every other kernel. Copies and sets are neither (docs/analyzer.md,
// "Communication").
#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>

#include "analysis_parts.h"
#include "communication.h"
#include "communication_buckets.h"
#include "kernel_range_scan.h"
#include "process_ranks.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {

std::vector<bool> communication_functions(const TraceFile& trace) {
    std::vector<bool> is_comm;
    trace::Statement rows(trace.db,
                          "SELECT f.id FROM functions f JOIN strings s ON s.id = f.name "
                          "WHERE s.text LIKE 'nccl%' OR s.text LIKE 'void nccl%'");
    bool any = false;
    while (rows.step()) {
        const int64_t id = rows.column_int(0);
        if (id < 0 || id > (int64_t{1} << 26)) continue;  // not a builder's id: never a kernel we can index
        if (static_cast<size_t>(id) >= is_comm.size()) is_comm.resize(static_cast<size_t>(id) + 1, false);
        is_comm[static_cast<size_t>(id)] = any = true;
    }
    return any ? is_comm : std::vector<bool>{};
}

std::vector<RankKernels> read_rank_kernels(const TraceFile& trace, const std::vector<bool>& is_comm,
                                           const Window& window) {
    struct Pending {
        std::vector<Stretch> communication, computation, collectives;
    };
    std::map<std::pair<int64_t, int64_t>, Pending> by_rank;
    for_each_window_kernel(trace, is_comm, window, [&](const WindowKernel& k) {
        Pending& rank = by_rank[k.rank];
        (k.communication ? rank.communication : rank.computation).push_back(k.clipped);
        if (k.communication && k.whole.begin >= window.begin_ns) rank.collectives.push_back(k.whole);
        return true;
    });
    std::vector<RankKernels> ranks;
    for (auto& [key, pending] : by_rank) {
        RankKernels rank;
        rank.process = key.first;
        rank.device = key.second;
        rank.collectives = std::move(pending.collectives);
        // In start order already for a trace stored in time order; stable so that the k-th stays the k-th.
        std::stable_sort(rank.collectives.begin(), rank.collectives.end(),
                         [](const Stretch& a, const Stretch& b) { return a.begin < b.begin; });
        rank.communication = IntervalUnion(std::move(pending.communication));
        rank.computation = IntervalUnion(std::move(pending.computation));
        ranks.push_back(std::move(rank));
    }
    return ranks;
}

void read_ranks(const TraceFile& trace, std::vector<RankCommunication>& ranks, std::optional<int64_t>& world_size) {
    const auto note_int = [&](const char* key) -> std::optional<int64_t> {
        const std::optional<std::string> text = trace::read_note(trace.db, key);
        if (!text) return std::nullopt;
        try {
            return std::stoll(*text);
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
    world_size = note_int("distributed.world_size");
    const RecordedRanks recorded = read_recorded_ranks(trace);
    for (RankCommunication& r : ranks)
        if (auto found = recorded.rank_of_process.find(r.process); found != recorded.rank_of_process.end())
            r.rank = found->second;
    if (recorded.world_size) world_size = recorded.world_size;
    const std::optional<int64_t> rank = note_int("distributed.rank");
    if (rank && ranks.size() == 1 && !ranks.front().rank) ranks.front().rank = rank;
}

void CommunicationFigures::add(const CommunicationFigures& other) {
    communication_ns += other.communication_ns;
    computation_ns += other.computation_ns;
    overlapped_ns += other.overlapped_ns;
    exposed_ns += other.exposed_ns;
    idle_ns += other.idle_ns;
    kernels += other.kernels;
}

CommunicationFigures communication_figures(const RankKernels& rank, int64_t lo, int64_t hi) {
    CommunicationFigures f;
    f.communication_ns = rank.communication.measure(lo, hi);
    f.computation_ns = rank.computation.measure(lo, hi);
    f.overlapped_ns = rank.communication.shared(rank.computation, lo, hi);
    f.exposed_ns = f.communication_ns - f.overlapped_ns;
    f.idle_ns = std::max<int64_t>(0, (hi - lo) - (f.communication_ns + f.computation_ns - f.overlapped_ns));
    // Collectives are sorted by start: count those starting in [lo, hi) by two binary searches.
    const auto starts_before = [](int64_t t) { return [t](const Stretch& k) { return k.begin < t; }; };
    const auto first = std::partition_point(rank.collectives.begin(), rank.collectives.end(), starts_before(lo));
    const auto last = std::partition_point(first, rank.collectives.end(), starts_before(hi));
    f.kernels = last - first;
    return f;
}

namespace {

// Every rank's kernels in the window and their figures: by the sweep, or from the whole unions for
// a trace stored out of start order.
void read_ranks_figures(const TraceFile& trace, const std::vector<bool>& is_comm, const Report& report,
                        std::vector<RankKernels>& kernels, std::vector<RankFigures>& figures) {
    if (sweep_rank_kernels(trace, is_comm, report.window, report.iterations.spans, kernels, figures)) return;
    kernels = read_rank_kernels(trace, is_comm, report.window);
    figures.clear();
    for (const RankKernels& k : kernels) figures.push_back(rank_figures(k, report.window, report.iterations.spans));
}

std::vector<int64_t> durations(const std::vector<Stretch>& collectives) {
    std::vector<int64_t> out;
    out.reserve(collectives.size());
    for (const Stretch& c : collectives) out.push_back(c.end - c.begin);
    return out;
}

// What tbdprof fleet matches across traces: each collective's communicator and number on it. Only
// when the kernels read again are those the durations came from (they always are: the same rows).
void add_identities(IdentitiesByRank& identities, std::vector<RankCommunication>& ranks) {
    for (RankCommunication& rank : ranks) {
        auto found = identities.find({rank.process, rank.device});
        if (found == identities.end() || !rank.collective_durations_ns ||
            found->second.durations_ns != *rank.collective_durations_ns)
            continue;
        rank.collective_identities = std::move(found->second.collectives);
        rank.communicators = std::move(found->second.communicators);
    }
}

}  // namespace

void scan_communication(const TraceFile& trace, const std::vector<int64_t>& functions_run, bool collective_durations,
                        Report& report) {
    const std::vector<bool> is_comm = communication_functions(trace);
    if (is_comm.empty() || report.window.end_ns <= report.window.begin_ns) return;
    // A trace can name NCCL functions that no kernel runs (a library loaded, a generated trace):
    // then every rank would be left out below and the section absent. The GPU scan saw every
    // kernel's function, so this needs no pass over the kernels (the report's CPU time doubled).
    const auto runs_communication = [&](int64_t id) {
        return id >= 0 && static_cast<size_t>(id) < is_comm.size() && is_comm[static_cast<size_t>(id)];
    };
    if (std::none_of(functions_run.begin(), functions_run.end(), runs_communication)) return;
    std::vector<RankKernels> kernels;
    std::vector<RankFigures> figures;
    read_ranks_figures(trace, is_comm, report, kernels, figures);
    CommunicationMetrics& m = report.communication;
    std::vector<RankKernels> ranks;
    for (size_t i = 0; i < kernels.size(); ++i) {
        // A rank takes part in collectives: a process or device without communication kernels in the
        // window (a data loader's, an evaluation's) is no rank and would distort the comparison.
        if (kernels[i].collectives.empty() && !figures[i].communicates) continue;
        RankCommunication rank;
        rank.process = kernels[i].process;
        rank.device = kernels[i].device;
        rank.figures = figures[i].window;
        rank.iterations = std::move(figures[i].iterations);
        if (collective_durations) rank.collective_durations_ns = durations(kernels[i].collectives);
        m.total.add(rank.figures);
        m.ranks.push_back(std::move(rank));
        ranks.push_back(std::move(kernels[i]));
    }
    m.present = m.total.kernels > 0 || m.total.communication_ns > 0;
    if (!m.present) return;
    // Each collective's communicator and launch number: what the ranks' collectives are matched by,
    // and what tbdprof fleet reads (with the durations).
    IdentitiesByRank identities;
    if (collective_durations || ranks.size() > 1) identities = collective_identities(trace, is_comm, report.window);
    read_ranks(trace, m.ranks, m.world_size);
    compare_ranks(ranks, identities, m, report.notes);
    if (collective_durations) add_identities(identities, m.ranks);
    // The per-bucket view measures computation under each bucket: it needs the ranks' whole unions,
    // read only for a trace that has what the view needs.
    scan_buckets(
        trace, is_comm,
        [&] {
            std::vector<RankKernels> whole = read_rank_kernels(trace, is_comm, report.window);
            std::erase_if(whole, [](const RankKernels& r) { return r.collectives.empty() && r.communication.empty(); });
            return whole;
        },
        report);
}

}  // namespace tbdprof::analyzer
