#include "accuracy.h"

#include <sqlite3.h>

#include <cstdlib>
#include <deque>
#include <climits>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

namespace tbdprof::tagger {

std::optional<AccuracyReport> score_against_labels(sqlite3* db, const std::string& labels_path, std::string& error) {
    // Trace side: allocations in time order per address, with their category.
    std::unordered_map<uint64_t, std::deque<std::pair<int64_t, std::string>>> trace_by_address;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT address, bytes, coalesce(category, 'untagged') FROM memory_allocations "
                               "WHERE kind <> 'pinned_host' ORDER BY alloc_ns, id", -1, &s, nullptr) != SQLITE_OK) {
        error = std::string("cannot read allocations: ") + sqlite3_errmsg(db);
        return std::nullopt;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        auto address = static_cast<uint64_t>(sqlite3_column_int64(s, 0));
        auto text = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
        trace_by_address[address].push_back({sqlite3_column_int64(s, 1), text ? text : "untagged"});
    }
    sqlite3_finalize(s);

    std::ifstream in(labels_path);
    if (!in) {
        error = "cannot read labels file " + labels_path;
        return std::nullopt;
    }
    AccuracyReport report;
    std::string line;
    size_t line_number = 0;
    // Pool mode: segments live in the labels, and the tensors inside them (scored separately).
    std::map<uint64_t, int64_t> live_segments;  // address -> bytes
    std::vector<PooledLabel> pooled;
    std::unordered_map<uint64_t, size_t> live_pooled;  // address -> index into pooled
    while (std::getline(in, line)) {
        ++line_number;
        if (line.empty()) continue;
        std::istringstream fields(line);
        std::string event, address_text, bytes_text, category;
        if (!std::getline(fields, event, '\t') || !std::getline(fields, address_text, '\t') ||
            !std::getline(fields, bytes_text, '\t') || !std::getline(fields, category, '\t')) {
            error = labels_path + ":" + std::to_string(line_number) + ": expected 4 tab-separated fields";
            return std::nullopt;
        }
        uint64_t address = std::strtoull(address_text.c_str(), nullptr, 16);
        int64_t bytes = std::strtoll(bytes_text.c_str(), nullptr, 10);
        std::string time_text;
        int64_t time = std::getline(fields, time_text, '\t') ? std::strtoll(time_text.c_str(), nullptr, 10) : 0;
        if (event == "segment") live_segments[address] = bytes;
        if (event == "segment_free") live_segments.erase(address);
        if (event == "free") {
            auto found = live_pooled.find(address);
            if (found != live_pooled.end()) {
                pooled[found->second].free_time = time;
                live_pooled.erase(found);
            }
        }
        if (event != "alloc") continue;
        auto segment = live_segments.upper_bound(address);
        if (segment != live_segments.begin() && address < std::prev(segment)->first + uint64_t(std::prev(segment)->second)) {
            live_pooled[address] = pooled.size();
            pooled.push_back({address, bytes, category, time, INT64_MAX});
            continue;
        }
        ++report.labelled_allocations;
        report.labelled_bytes += bytes;
        report.by_category[category].labelled_bytes += bytes;
        auto it = trace_by_address.find(address);
        if (it == trace_by_address.end() || it->second.empty()) {
            ++report.unmatched_labels;
            continue;
        }
        std::string tagged = it->second.front().second;
        it->second.pop_front();
        report.by_category[tagged].tagged_bytes += bytes;
        if (tagged == category) {
            report.correct_bytes += bytes;
            report.by_category[category].correct_bytes += bytes;
        }
    }
    if (!pooled.empty() && !score_pooled_labels(db, pooled, report, error)) return std::nullopt;
    return report;
}

}  // namespace tbdprof::tagger
