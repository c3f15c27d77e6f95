// The report's "Communication" section (text, markdown and HTML): present only when the window
// holds communication kernels.
#include <algorithm>
#include <string>

#include "report_document.h"
#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

std::string duration(int64_t ns) {
    return format_duration_ns(static_cast<double>(ns));
}

std::string rank_name(const RankCommunication& r) {
    return r.rank ? std::to_string(*r.rank)
                  : "process " + std::to_string(r.process) + " device " + std::to_string(r.device);
}

std::vector<std::string> figures_row(std::string name, const CommunicationFigures& f) {
    return {std::move(name),        duration(f.communication_ns),         duration(f.overlapped_ns),
            duration(f.exposed_ns), format_percent(f.overlap_fraction()), duration(f.computation_ns),
            duration(f.idle_ns)};
}

// How the waits' collectives were matched (one line; none with one rank).
std::string matching_line(const CollectiveMatching& w) {
    if (w.matched_by == "order")
        return "waited: collectives matched by order" +
               (w.collectives ? " (" + std::to_string(*w.collectives) + " per rank)" : std::string()) +
               ": the trace names no communicator (no NCCL call recorded)";
    std::string line =
        "waited: collectives matched by " + w.matched_by + ": " + std::to_string(w.collectives.value_or(0)) + " on " +
        std::to_string(w.communicators.value_or(0)) + (w.communicators == 1 ? " communicator" : " communicators");
    std::string left;
    for (const auto& [why, count] : w.left_out) left += (left.empty() ? "" : "; ") + std::to_string(count) + " " + why;
    return line + (left.empty() ? "" : "; left out: " + left);
}

}  // namespace

Section communication_section(const Report& r) {
    const CommunicationMetrics& m = r.communication;
    Section s{"Communication",
              {},
              Table{{"rank", "comm.", "overlapped", "exposed", "overlap", "compute", "idle", "waited"},
                    {false, true, true, true, true, true, true, true},
                    {}},
              {}};
    s.lines.push_back("communication (NCCL kernels) " + duration(m.total.communication_ns) + ", of which " +
                      format_percent(m.total.overlap_fraction()) + " overlapped by computation; exposed " +
                      duration(m.total.exposed_ns) + " (only communication running), over " +
                      std::to_string(m.ranks.size()) + (m.ranks.size() == 1 ? " rank" : " ranks") +
                      (m.world_size ? " of " + std::to_string(*m.world_size) : "") + " in the window; " +
                      std::to_string(m.total.kernels) + " communication kernels");
    s.lines.push_back(
        "comm.: NCCL kernels running; overlapped: while other kernels run; exposed: alone; compute: "
        "other kernels running; idle: no kernel; waited: inside collectives for the other ranks");
    if (r.iterations.count > 0) {
        const double n = static_cast<double>(r.iterations.count * static_cast<int64_t>(m.ranks.size()));
        s.lines.push_back("per iteration and rank: exposed communication " +
                          format_duration_ns(static_cast<double>(m.total.exposed_ns) / n) + ", communication " +
                          format_duration_ns(static_cast<double>(m.total.communication_ns) / n));
    }
    if (m.slowest) {
        s.lines.push_back(
            "slowest rank (most computation): " + rank_name(m.ranks[*m.slowest]) +
            (m.imbalance ? "; imbalance (max / median computation) " + format_number(*m.imbalance, 3) : ""));
    }
    if (!m.waits.matched_by.empty()) s.lines.push_back(matching_line(m.waits));
    if (m.waited_for) {
        const RankCommunication& late = m.ranks[*m.waited_for];
        int64_t longest = 0;
        for (const RankCommunication& rank : m.ranks) longest = std::max(longest, rank.wait_ns.value_or(0));
        s.lines.push_back("the others waited for: " + rank_name(late) + " (it waited " + duration(*late.wait_ns) +
                          " inside collectives, the others up to " + duration(longest) +
                          "; a rank slowed outside its kernels, by host work or input, shows here)");
    }
    for (const RankCommunication& rank : m.ranks) {
        std::vector<std::string> row = figures_row(rank_name(rank), rank.figures);
        row.push_back(rank.wait_ns ? duration(*rank.wait_ns) : "-");
        s.table->add(std::move(row));
    }
    if (m.ranks.size() > 1) {
        std::vector<std::string> row = figures_row("all ranks", m.total);
        row.push_back("-");
        s.table->add(std::move(row));
    }
    return s;
}

}  // namespace tbdprof::analyzer
