// Library workspaces as barriers in time (docs/tagging.md, issue 21's merge of change 45). While a
// library call runs, the bytes it was handed as workspace, [workspace, workspace + size), are that
// call's scratch: the program gave the library a block no tensor of its own then held (a caching
// allocator's free block, a handle's reserved buffer), and the call may overwrite any of it. So no
// value at an address inside that extent, other than at its start (split_address's own rule), is
// carried from before the call to after it: uses of the address on either side are two tensors.
// Without that cut, one address's uses before and after the call join into one piece "in use" across
// the call, which caps the workspace's extent and its neighbours' at that address.
#pragma once

#include "model.h"

#include <cstdint>
#include <vector>

namespace tbdprof::tagger {

// One library call's workspace use in a segment: its extent and its work item.
struct WorkspaceSpan {
    uint32_t work = 0;         // index into TraceModel::work (one per kernel of the call)
    uint64_t offset = 0;       // from the segment's start
    int64_t bytes = 0;         // the size the call was given (> 0)
    int32_t library_call = 0;  // index into TraceModel::library_calls
};

// The workspace uses with a recorded size among `uses` (indices into m.pointer_uses, one segment's),
// ordered by work.
std::vector<WorkspaceSpan> workspace_spans(const TraceModel& m, const std::vector<size_t>& uses);

// Whether a call whose workspace extent holds `offset` strictly above the workspace's start ran
// between work `before` and work `after` (exclusive), other than a call doing either of them.
// `spans`: workspace_spans of the segment.
bool workspace_between(const TraceModel& m, const std::vector<WorkspaceSpan>& spans, uint64_t offset, uint32_t before,
                       uint32_t after);

}  // namespace tbdprof::tagger
