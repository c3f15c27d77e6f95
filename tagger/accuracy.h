// Agreement of the tagger with ground-truth labels (../shared/notes/definitions.md): byte-weighted,
// per category precision and recall. Labels are matched to the trace's allocations by address, in
// order of events (the k-th allocation at an address in the labels is the k-th in the trace).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

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
    size_t labelled_allocations = 0;
    size_t unmatched_labels = 0;  // labelled allocations the trace does not have
    size_t pooled_labels = 0;     // of which tensors inside pool segments, scored against sub-ranges
    std::map<std::string, CategoryScore> by_category;
    double accuracy() const { return labelled_bytes ? double(correct_bytes) / double(labelled_bytes) : 0.0; }
};

std::optional<AccuracyReport> score_against_labels(sqlite3* db, const std::string& labels_path, std::string& error);

// A labelled tensor inside a labelled pool segment (samples' --alloc pool): times are the labels'
// host times (CLOCK_MONOTONIC ns), free_time INT64_MAX when the file never frees it.
struct PooledLabel {
    uint64_t address = 0;
    int64_t bytes = 0;
    std::string category;
    int64_t alloc_time = 0;
    int64_t free_time = 0;
};

// Scores pooled labels against the sub-range tags of the segment that holds them
// (allocation_subranges): each labelled byte takes the category of the sub-range covering it that
// overlaps the tensor's life most; bytes no sub-range covers count as 'unattributed'. A segment
// without sub-ranges (or a trace without the table) scores by the segment's own category.
bool score_pooled_labels(sqlite3* db, const std::vector<PooledLabel>& labels, AccuracyReport& report,
                         std::string& error);

}  // namespace tbdprof::tagger
