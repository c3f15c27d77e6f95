// The tagging rules: from lifetimes, data flow and library roles to a memory category per allocation.
// No rule looks at kernel names: real frameworks do not name their backward kernels "backward".
#pragma once

#include "iterations.h"
#include "model.h"

#include <string>
#include <vector>

namespace tbdprof::tagger {

struct Tag {
    std::string category;
    double confidence = 0;
    std::string rule;    // short id, e.g. "gemm-operand-persistent"
    std::string reason;  // one sentence a user can check against the trace
    std::string evidence;  // the data flow behind it: uses per phase, carried in or made in the step
};

struct Phase {
    size_t iteration = 0;
    std::string kind;  // forward, backward, optimizer
    int64_t begin_ns = 0;  // host time, launches
    int64_t end_ns = 0;
    // The device work the iteration's process launched in [begin_ns, end_ns): start of the first item
    // to the end of the last; 0 and 0 when it launched none.
    int64_t device_begin_ns = 0;
    int64_t device_end_ns = 0;
};

// A tensor inside a pooled segment (see subranges.h), with its tag.
struct SubRangeTag {
    int32_t segment = kNone;  // index into TraceModel::allocations
    uint64_t offset = 0;
    int64_t bytes = 0;
    int64_t begin_ns = 0;  // launch of the first work that used it
    int64_t end_ns = 0;    // end of the last
    Tag tag;
};

struct TagResult {
    std::vector<Tag> tags;  // one per TraceModel::allocations entry
    std::vector<Phase> phases;
    std::vector<bool> optimizer_work;  // per TraceModel::work entry: found to be the optimizer's
    std::vector<SubRangeTag> subranges;  // pooled traces only
    size_t segments_with_subranges = 0;  // multi-tensor: the tensors inside play different roles
    size_t single_role_segments = 0;     // examined, tensors found, all of one role: one tensor
    size_t segments_without_subranges = 0;  // pooled segments (kPooledOffsets) left at segment level
    bool segment_level = false;  // pooled segments without sub-ranges: breakdown at segment granularity
    size_t registered_regions = 0;  // sub-ranges that are regions the program registered (nvtx_regions.h)
    size_t named_regions = 0;       // ... of which the name gave the category
};

TagResult tag_allocations(const TraceModel& model, const IterationSet& iterations);

}  // namespace tbdprof::tagger
