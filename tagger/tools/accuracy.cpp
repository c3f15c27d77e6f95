#include "accuracy.h"

#include <tbdprof/trace/tables.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

namespace tbdprof::tagger {

bool same_merged_category(const std::string& a, const std::string& b) {
    auto transient = [](const std::string& c) { return c == "activations" || c == "workspace"; };
    return a == b || (transient(a) && transient(b));
}

void AccuracyReport::count(const std::string& truth, const std::string& tagged, int64_t bytes) {
    by_category[tagged].tagged_bytes += bytes;
    if (same_merged_category(truth, tagged)) merged_correct_bytes += bytes;
    if (truth != tagged) return;
    correct_bytes += bytes;
    by_category[truth].correct_bytes += bytes;
}

namespace {

struct Span {
    std::string kind;
    int64_t begin = 0, end = 0;  // CLOCK_MONOTONIC ns
};

// Compares the trace's iterations with the labelled training steps: a trace iteration matches when
// it starts within a tenth of a step's length of that step's true start.
void compare_iterations(const trace::Database& db, const std::vector<Span>& spans, AccuracyReport& report) {
    const int64_t start = trace::read_run(db).start_monotonic_ns;
    std::vector<const Span*> steps;
    for (const Span& span : spans) {
        if (span.kind == "training")
            steps.push_back(&span);
        else
            ++report.labelled_other_spans;
    }
    report.labelled_steps = steps.size();
    std::vector<bool> used(steps.size(), false);
    trace::IterationRow it;
    for (trace::RowReader<trace::IterationRow> rows(db, {.by_time = true}); rows.next(it);) {
        ++report.trace_iterations;
        int64_t begin = it.begin_ns + start;
        for (size_t i = 0; i < steps.size(); ++i) {
            int64_t tolerance = (steps[i]->end - steps[i]->begin) / 10;
            if (used[i] || begin < steps[i]->begin - tolerance || begin > steps[i]->begin + tolerance) continue;
            used[i] = true;
            ++report.matched_step_starts;
            break;
        }
    }
}

}  // namespace

std::optional<AccuracyReport> score_against_labels(const trace::Database& db, const std::string& labels_path,
                                                   std::string& error) {
    // Trace side: device allocations in time order per address, with their category.
    struct TraceAllocation {
        int64_t id = 0, alloc_ns = 0, free_ns = INT64_MAX;
        std::string category;
    };
    std::unordered_map<uint64_t, std::deque<TraceAllocation>> trace_by_address;
    trace::AllocationRow r;
    for (trace::RowReader<trace::AllocationRow> rows(db, {.by_time = true}); rows.next(r);)
        if (trace::is_device_memory(r.kind))
            trace_by_address[static_cast<uint64_t>(r.address)].push_back(
                {r.id, r.alloc_ns, r.free_ns.value_or(INT64_MAX),
                 r.category.empty() ? "untagged" : std::string(r.category)});
    // A whole-allocation label whose allocation the tagger split into sub-ranges is scored byte by
    // byte against them, as the report counts them (an arena or a static buffer the labels describe
    // as one tensor, or per-image slices of one tensor).
    std::vector<int64_t> split_ids = allocations_with_subranges(db);
    std::vector<Span> spans;

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
        if (event == "span") {  // span<TAB>KIND<TAB>INDEX<TAB>BEGIN_NS<TAB>END_NS
            spans.push_back({address_text, std::strtoll(category.c_str(), nullptr, 10), time});
            continue;
        }
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
        bool in_segment = segment != live_segments.begin() &&
                          address < std::prev(segment)->first + uint64_t(std::prev(segment)->second);
        if (category == "-") {  // unknown to the labeller: keeps the k-th-allocation matching, not scored
            ++report.unknown_labels;
            report.unknown_bytes += bytes;
            auto unknown = trace_by_address.find(address);
            if (!in_segment && unknown != trace_by_address.end() && !unknown->second.empty())
                unknown->second.pop_front();
            continue;
        }
        if (in_segment) {
            live_pooled[address] = pooled.size();
            pooled.push_back({address, bytes, category, time, INT64_MAX});
            continue;
        }
        auto it = trace_by_address.find(address);
        if (it != trace_by_address.end() && !it->second.empty() &&
            std::binary_search(split_ids.begin(), split_ids.end(), it->second.front().id)) {
            const TraceAllocation& a = it->second.front();
            pooled.push_back({address, bytes, category, a.alloc_ns, a.free_ns, a.id});
            it->second.pop_front();
            continue;
        }
        ++report.labelled_allocations;
        report.labelled_bytes += bytes;
        report.by_category[category].labelled_bytes += bytes;
        if (it == trace_by_address.end() || it->second.empty()) {
            ++report.unmatched_labels;
            continue;
        }
        report.count(category, it->second.front().category, bytes);
        it->second.pop_front();
    }
    std::vector<std::pair<int64_t, int64_t>> training_steps;
    for (const Span& span : spans)
        if (span.kind == "training") training_steps.push_back({span.begin, span.end});
    if (!pooled.empty()) score_pooled_labels(db, pooled, report, training_steps);
    compare_iterations(db, spans, report);
    return report;
}

}  // namespace tbdprof::tagger
