// Memory tagging: gives every device allocation of a trace a category (weights, gradients,
// optimizer_state, activations, workspace, input, other), a confidence and the rule that decided,
// and finds training iterations and their phases. Runs when a trace is built, and again with
// `tbdprof tag TRACE`.
#pragma once

#include <tbdprof/trace/fast_scans.h>
#include <tbdprof/trace/tables.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tbdprof::tagger {

struct TagOptions {
    std::string iteration_range;  // NVTX range name that marks an iteration; empty: the usual names
};

struct TagSummary {
    size_t allocations = 0;
    size_t iterations = 0;
    std::string iteration_source;  // 'nvtx', 'repetition', or empty
    std::string note;              // why there are no iterations, when there are none
    std::map<std::string, int64_t> bytes_by_category;
    // Some allocations are caching-allocator segments holding many tensors. Where the pointers the work
    // used allow, the tensors inside are tagged as sub-ranges (allocation_subranges); segments without
    // such evidence keep their dominant role, and the breakdown is at segment level there.
    bool segment_level = false;
    size_t segments_with_subranges = 0;
    size_t subranges = 0;
    // Built before the builder stored the allocations copies and library calls point into: their
    // operands are unresolved and the tags less reliable. Rebuilding from the run directory helps.
    bool operands_unresolved = false;
};

// What the tagger throws (docs/architecture.md, "Errors"): one sentence naming the trace.
class TagError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One row of a trace's `ranges` table as the tagger uses it (trace-relative times; end_ns is
// begin_ns where the row has none).
struct HostRange {
    int32_t process = 0;
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    std::string name;
};

// Opens `path` and tags it, in one transaction that replaces earlier results. A trace that cannot be
// tagged is left unchanged; TagError says why (SQLite's message and the statement that failed).
TagSummary tag_trace_file(const std::string& path, const TagOptions& options);

// Rows of a trace that its writer still has when it tags it (an import), taken as they are instead
// of read back from the file: on a Kineto import the ranges are most of the rows (reading them back
// was a tenth of the import's CPU), and reading the allocations back was 61 M of df_index_resolver's
// 2,200 M instructions (13,386 rows through SQLite, 4,600 instructions a row).
struct WrittenRows {
    std::vector<HostRange> ranges;  // the `ranges` table's rows in id order
    // The `allocations` table's rows in id order (their tag fields unused); absent: read from the file.
    std::optional<std::vector<trace::AllocationRow>> allocations;
    // The `kernels` table's rows in id order as trace::for_each_kernel_launch gives them; absent:
    // read from the file (40 M instructions of the same import).
    std::optional<std::vector<trace::KernelLaunch>> kernels;
    // The `api_calls` table's rows in (begin_ns, id) order, as RowReader's by_time reads them; absent:
    // read from the file (25 M instructions of the same import).
    std::optional<std::vector<trace::ApiCallRow>> api_calls;
};

// The same for a caller that has just written the trace at `path` itself, with what it wrote.
TagSummary tag_trace_file(const std::string& path, const TagOptions& options, WrittenRows written);

// Prints the stored tag of allocation `what` (an id, or a 0x address any allocation contained) and of
// the tensors inside it: category, confidence, rule, reason and evidence. For `tag --explain`.
// Throws TagError when `what` is neither, names no allocation, or the trace cannot be read.
void explain_allocation(const std::string& path, const std::string& what);

}  // namespace tbdprof::tagger
