// `tbdprof merge`: per-host traces of one distributed job made into one trace, every input's clock
// moved onto the first input's. Hosts do not share a clock, but a collective cannot end on any rank
// before every rank has reached it and ends on all of them at the same moment, so the median of the
// end-time differences of the collectives two inputs share is the offset between their clocks
// (merge_clock.cpp). Every id is remapped so nothing collides (merge_tables.cpp); the output is
// written through an OutputFile (temporary + rename).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tbdprof::trace {

// Bad input or a failed write: one sentence for the user.
class MergeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MergeOptions {
    std::vector<std::string> inputs;  // the per-host traces; the first one's clock is the output's
    std::string output;
    bool force = false;  // replace an existing output file
    // Empty: offsets from collectives. Otherwise one per input, in ns, added to that input's times
    // (the first one's included); no collective needs to be shared then.
    std::vector<int64_t> offsets_ns;
};

struct MergedInput {
    std::string path;
    int64_t offset_ns = 0;             // added to this input's times to put them on the first input's clock
    int64_t matched = 0;               // end-time differences the offset is the median of (0: first, or given)
    int64_t agreeing = 0;              // of those, how many lie within 1 us of the offset
    int64_t spread_ns = 0;             // max - min of those differences
    int64_t rank_pairs = 0;            // pairs of communicators (one rank here, one in an aligned input) matched
    std::optional<size_t> aligned_to;  // the input whose collectives it was aligned with
    int64_t processes = 0, kernels = 0;
};

struct MergeSummary {
    std::vector<MergedInput> inputs;
    int64_t processes = 0, kernels = 0, ranks = 0;
    std::optional<int64_t> world_size;
    int64_t shift_ns = 0;  // added to every time so that none is negative (0 unless an input has
                           // events before the first input's time 0)
};

// Throws MergeError. Refuses: fewer than two inputs, an input that is not a tbdprof trace, the same
// rank in two inputs, different world sizes, inputs sharing no collective (without offsets_ns).
MergeSummary merge_traces(const MergeOptions& options);

}  // namespace tbdprof::trace
