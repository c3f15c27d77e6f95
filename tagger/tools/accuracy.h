// Agreement of the tagger with ground-truth labels (../shared/notes/definitions.md): byte-weighted,
// per category precision and recall. Labels are matched to the trace's allocations by address, in
// order of events (the k-th allocation at an address in the labels is the k-th in the trace).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tbdprof::trace {
class Database;
}

namespace tbdprof::tagger {

struct CategoryScore {
    int64_t labelled_bytes = 0;  // truth says this category
    int64_t tagged_bytes = 0;    // tagger says this category (among labelled allocations)
    int64_t correct_bytes = 0;
    double precision() const { return tagged_bytes ? double(correct_bytes) / double(tagged_bytes) : 1.0; }
    double recall() const { return labelled_bytes ? double(correct_bytes) / double(labelled_bytes) : 1.0; }
};

struct AccuracyReport {
    int64_t labelled_bytes = 0;
    int64_t correct_bytes = 0;
    // Bytes right when activations and workspace count as one category (definitions.md: a temporary
    // of one operation and an activation differ only by how far the data travels).
    int64_t merged_correct_bytes = 0;
    size_t labelled_allocations = 0;
    size_t unmatched_labels = 0;   // labelled allocations the trace does not have
    size_t pooled_labels = 0;      // of which tensors inside pool segments, scored against sub-ranges
    size_t split_allocations = 0;  // whole-allocation labels the trace split into sub-ranges (scored by them)
    // Allocations labelled '-': the labeller does not know their category (PyTorch's memory profiler
    // gives none to memory no tensor owns). They keep the order of allocations at their address and
    // are not scored.
    size_t unknown_labels = 0;
    int64_t unknown_bytes = 0;
    std::map<std::string, CategoryScore> by_category;
    // The program's own spans (labels' `span` lines): training steps and validation/checkpoint spans,
    // and how the trace's `iterations` rows compare with the training steps.
    size_t labelled_steps = 0, labelled_other_spans = 0, trace_iterations = 0;
    size_t matched_step_starts = 0;  // trace iterations starting inside the right labelled step's first 10%
    double accuracy() const { return labelled_bytes ? double(correct_bytes) / double(labelled_bytes) : 0.0; }
    double merged_accuracy() const {
        return labelled_bytes ? double(merged_correct_bytes) / double(labelled_bytes) : 0.0;
    }
    // Adds `bytes` labelled `truth` that the trace tags `tagged`.
    void count(const std::string& truth, const std::string& tagged, int64_t bytes);
};

// True when the two categories are equal, or are activations and workspace.
bool same_merged_category(const std::string& a, const std::string& b);

// Throws trace::SqliteError when the trace cannot be read; `error` says what is wrong with the labels.
std::optional<AccuracyReport> score_against_labels(const trace::Database& db, const std::string& labels_path,
                                                   std::string& error);

// A labelled tensor inside a labelled segment (a pool segment, an arena or a statically planned
// block: the labels' `segment` lines): times are the labels' host times (CLOCK_MONOTONIC ns),
// free_time INT64_MAX when the file never frees it. `allocation` > 0 names the trace allocation
// directly (a whole-allocation label whose allocation the trace split into sub-ranges); its times are
// then the trace's (ns from run start) and the label covers the allocation.
struct PooledLabel {
    uint64_t address = 0;
    int64_t bytes = 0;
    std::string category;
    int64_t alloc_time = 0;
    int64_t free_time = 0;
    int64_t allocation = 0;
    // The latest free, at or before alloc_time, of another tensor the labels put on any of these bytes
    // (labels' clock; INT64_MIN when none): a use of the bytes launched after it can only be this
    // tensor's (or an unlabelled one's), one launched before it was an earlier tenant's.
    int64_t previous_free_time = INT64_MIN;
};

// Sets each non-direct label's previous_free_time from the lives of `tenants` (every tensor the
// labels put inside a segment, known category or not).
void set_previous_frees(std::vector<PooledLabel>& labels, const std::vector<PooledLabel>& tenants);

// Trace allocation ids that have rows in allocation_subranges (empty without the table), sorted.
std::vector<int64_t> allocations_with_subranges(const trace::Database& db);

// Scores pooled labels against the sub-range tags of the segment that holds them
// (allocation_subranges): each labelled byte takes the category of a sub-range covering it in the
// tensor's life: one whose first use was launched after the bytes' previous tenant was freed (the
// tensor's own) before an earlier tenant's, then one used during a labelled training step
// (`training_steps`: begin and end, host CLOCK_MONOTONIC ns) before one used only outside the steps,
// then the one whose life matches the tensor's best (overlap over union); bytes no sub-range covers
// count as 'unattributed'. A segment without sub-ranges (or a trace without the table) scores by the
// segment's own category.
void score_pooled_labels(const trace::Database& db, const std::vector<PooledLabel>& labels, AccuracyReport& report,
                         const std::vector<std::pair<int64_t, int64_t>>& training_steps = {});

}  // namespace tbdprof::tagger
