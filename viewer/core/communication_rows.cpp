#include "communication_rows.h"

#include <memory>

#include "tbdprof/analyzer/communication_timeline.h"

namespace tbdprof::viewer {
namespace {

constexpr uint32_t kExposedLabel = 0, kOverlappedLabel = 1;

std::string rank_title(const analyzer::RankCommunicationStretches& r) {
    const std::string who = r.rank ? "rank " + std::to_string(*r.rank) : "process " + std::to_string(r.process);
    return who + " · GPU " + std::to_string(r.device) + " · communication";
}

// The two kinds merged into one row in start order (they never overlap: one is the other's complement
// within the communication). Items carry no trace id: -1.
ItemRow merged_items(const analyzer::RankCommunicationStretches& r) {
    ItemRow items;
    size_t e = 0, o = 0;
    while (e < r.exposed_ns.size() || o < r.overlapped_ns.size()) {
        const bool take_exposed = o == r.overlapped_ns.size() ||
                                  (e < r.exposed_ns.size() && r.exposed_ns[e].first < r.overlapped_ns[o].first);
        const auto& [begin, end] = take_exposed ? r.exposed_ns[e++] : r.overlapped_ns[o++];
        items.add(begin, end, take_exposed ? kExposedLabel : kOverlappedLabel, -1);
    }
    return items;
}

}  // namespace

void add_communication_rows(const std::string& path, std::vector<TimelineRow>& rows) {
    const std::vector<analyzer::RankCommunicationStretches> ranks = analyzer::communication_stretches(path);
    if (ranks.empty()) return;
    auto labels = std::make_shared<const std::vector<std::string>>(
        std::vector<std::string>{kExposedCommunication, kOverlappedCommunication});
    for (const analyzer::RankCommunicationStretches& r : ranks) {
        TimelineRow row;
        row.kind = RowKind::communication;
        row.device = r.device;
        row.title = rank_title(r);
        row.items = merged_items(r);
        row.labels = labels;
        rows.push_back(std::move(row));
    }
}

}  // namespace tbdprof::viewer
