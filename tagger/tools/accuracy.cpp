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

// A device allocation of the trace, with its category.
struct TraceAllocation {
    int64_t id = 0, alloc_ns = 0, free_ns = INT64_MAX;
    std::string category;
};

// One line of a labels file: EVENT ADDRESS BYTES CATEGORY [TIME]; a span line is
// span<TAB>KIND<TAB>INDEX<TAB>BEGIN_NS<TAB>END_NS (KIND in address_text, BEGIN_NS in category).
struct LabelLine {
    std::string event, address_text, category;
    uint64_t address = 0;
    int64_t bytes = 0, time = 0;
};

// False when the line has fewer than 4 tab-separated fields.
bool parse_label_line(const std::string& line, LabelLine& out) {
    std::istringstream fields(line);
    std::string bytes_text, time_text;
    if (!std::getline(fields, out.event, '\t') || !std::getline(fields, out.address_text, '\t') ||
        !std::getline(fields, bytes_text, '\t') || !std::getline(fields, out.category, '\t'))
        return false;
    out.address = std::strtoull(out.address_text.c_str(), nullptr, 16);
    out.bytes = std::strtoll(bytes_text.c_str(), nullptr, 10);
    out.time = std::getline(fields, time_text, '\t') ? std::strtoll(time_text.c_str(), nullptr, 10) : 0;
    return true;
}

// What scoring the labels in file order keeps.
struct LabelScoring {
    // Trace side: device allocations in time order per address, each taken by the label it matches.
    std::unordered_map<uint64_t, std::deque<TraceAllocation>> trace_by_address = {};
    // A whole-allocation label whose allocation the tagger split into sub-ranges is scored byte by
    // byte against them, as the report counts them (an arena or a static buffer the labels describe
    // as one tensor, or per-image slices of one tensor).
    std::vector<int64_t> split_ids = {};
    std::vector<Span> spans = {};
    // Pool mode: segments live in the labels, and the tensors inside them (scored separately).
    std::map<uint64_t, int64_t> live_segments = {};  // address -> bytes
    std::vector<PooledLabel> pooled = {};
    std::unordered_map<uint64_t, size_t> live_pooled = {};  // address -> index into pooled
    // Every tensor inside a live segment, known category or not, for the pooled labels' previous tenants.
    std::vector<PooledLabel> tenants = {};
    std::unordered_map<uint64_t, size_t> live_tenants = {};  // address -> index into tenants
    AccuracyReport report = {};
};

void read_trace_allocations(const trace::Database& db, LabelScoring& s) {
    trace::AllocationRow r;
    for (trace::RowReader<trace::AllocationRow> rows(db, {.by_time = true}); rows.next(r);)
        if (trace::is_device_memory(r.kind))
            s.trace_by_address[static_cast<uint64_t>(r.address)].push_back(
                {r.id, r.alloc_ns, r.free_ns.value_or(INT64_MAX),
                 r.category.empty() ? "untagged" : std::string(r.category)});
}

// Segments the labels open and close, and frees of the pooled tensors inside them.
void follow_segments(LabelScoring& s, const LabelLine& label) {
    if (label.event == "segment") s.live_segments[label.address] = label.bytes;
    if (label.event == "segment_free") s.live_segments.erase(label.address);
    if (label.event != "free") return;
    if (auto tenant = s.live_tenants.find(label.address); tenant != s.live_tenants.end()) {
        s.tenants[tenant->second].free_time = label.time;
        s.live_tenants.erase(tenant);
    }
    auto found = s.live_pooled.find(label.address);
    if (found == s.live_pooled.end()) return;
    s.pooled[found->second].free_time = label.time;
    s.live_pooled.erase(found);
}

// An `alloc` label: unknown (skipped), a tensor inside a live segment or a split allocation (scored
// later, by sub-range), or scored against the next trace allocation at its address.
void score_allocation_label(LabelScoring& s, const LabelLine& label) {
    const uint64_t address = label.address;
    auto segment = s.live_segments.upper_bound(address);
    bool in_segment = segment != s.live_segments.begin() &&
                      address < std::prev(segment)->first + uint64_t(std::prev(segment)->second);
    AccuracyReport& report = s.report;
    auto it = s.trace_by_address.find(address);
    if (in_segment) {
        s.live_tenants[address] = s.tenants.size();
        s.tenants.push_back({address, label.bytes, label.category, label.time, INT64_MAX});
    }
    if (label.category == "-") {  // unknown to the labeller: keeps the k-th-allocation matching, not scored
        ++report.unknown_labels;
        report.unknown_bytes += label.bytes;
        if (!in_segment && it != s.trace_by_address.end() && !it->second.empty()) it->second.pop_front();
        return;
    }
    if (in_segment) {
        s.live_pooled[address] = s.pooled.size();
        s.pooled.push_back({address, label.bytes, label.category, label.time, INT64_MAX});
        return;
    }
    if (it != s.trace_by_address.end() && !it->second.empty() &&
        std::binary_search(s.split_ids.begin(), s.split_ids.end(), it->second.front().id)) {
        const TraceAllocation& a = it->second.front();
        s.pooled.push_back({address, label.bytes, label.category, a.alloc_ns, a.free_ns, a.id});
        it->second.pop_front();
        return;
    }
    ++report.labelled_allocations;
    report.labelled_bytes += label.bytes;
    report.by_category[label.category].labelled_bytes += label.bytes;
    if (it == s.trace_by_address.end() || it->second.empty()) {
        ++report.unmatched_labels;
        return;
    }
    report.count(label.category, it->second.front().category, label.bytes);
    it->second.pop_front();
}

}  // namespace

std::optional<AccuracyReport> score_against_labels(const trace::Database& db, const std::string& labels_path,
                                                   std::string& error) {
    LabelScoring s;
    read_trace_allocations(db, s);
    s.split_ids = allocations_with_subranges(db);
    std::ifstream in(labels_path);
    if (!in) {
        error = "cannot read labels file " + labels_path;
        return std::nullopt;
    }
    std::string line;
    for (size_t line_number = 1; std::getline(in, line); ++line_number) {
        if (line.empty()) continue;
        LabelLine label;
        if (!parse_label_line(line, label)) {
            error = labels_path + ":" + std::to_string(line_number) + ": expected 4 tab-separated fields";
            return std::nullopt;
        }
        if (label.event == "span") {
            s.spans.push_back({label.address_text, std::strtoll(label.category.c_str(), nullptr, 10), label.time});
            continue;
        }
        follow_segments(s, label);
        if (label.event == "alloc") score_allocation_label(s, label);
    }
    std::vector<std::pair<int64_t, int64_t>> training_steps;
    for (const Span& span : s.spans)
        if (span.kind == "training") training_steps.push_back({span.begin, span.end});
    set_previous_frees(s.pooled, s.tenants);
    if (!s.pooled.empty()) score_pooled_labels(db, s.pooled, s.report, training_steps);
    compare_iterations(db, s.spans, s.report);
    return s.report;
}

}  // namespace tbdprof::tagger
