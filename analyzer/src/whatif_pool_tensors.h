// The tensors of a caching pool's segments as the pool saw them, for the what-if's pool replay
// (docs/whatif.md, "Caching pools"). The tagger recovers a tensor's life from the work that used it
// (allocation_subranges: first use to last use, per use period), not from the pool's requests and
// releases. Two facts of the recorded placement put them back in the pool's order:
//  - a pooled byte holds one tensor at a time: a tensor placed on bytes another one still seems to
//    hold shows that the pool had released the other one by then (its life ends there);
//  - a tensor recovered again on exactly the same bytes, with the same category, and nothing placed
//    on those bytes in between, is the same request: the pool never released it (a persistent
//    buffer used once per step, such as a gradient buffer).
// And one fact of the tagger: an extent it cannot size runs to its segment's end (docs/tagging.md).
// A tensor reaching its segment's end with no work of a known size (a library call's operand, a
// copy, a set) starting at its address is such a bound, not a size: `bound` marks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory_allocations.h"
#include "trace_file.h"
#include "whatif_mapped.h"
#include "whatif_pool_uses.h"

namespace tbdprof::analyzer {

struct PoolTensor {
    size_t segment = 0;  // index of its segment in the allocations
    int64_t offset = 0, bytes = 0;
    int64_t begin_ns = 0, end_ns = 0;  // the pool's request and release, on the recorded time base
    int category = 0;
    bool bound = false;  // the extent is the segment's end, not a known size
    // What a bound asks the pool for: the least its segment's pool serves (least_request_bytes).
    int64_t least_bytes = 1;
    // A library call's workspace (sub-range rule `library-workspace`, or a per-call request): its
    // size is the library's choice, not the batch's.
    bool library_workspace = false;
    // Its end is where the next tensor on its bytes begins (the pool handed its block on): its
    // release precedes that request at the same instant. Other releases at a last use follow the
    // requests of that instant (the work's outputs are requested before it is queued).
    bool ends_at_reuse = false;
    // On exactly a call's workspace extent, no matrix operand in its life (keep_workspace_data): the
    // library's bytes, named after the call by a word of a later kernel's argument struct.
    bool workspace_data = false;
};

// Two readings of the placement, for the replay to choose the one that gives back the recorded
// segments. A batch-sized tensor (input, activations, workspace) recovered again on the same bytes
// with nothing between may be a new request of the same size (PyTorch's best fit hands the released
// block back to it: each step, and each tensor the program released at its last use, makes its own)
// or the same one held (a program that keeps its step's tensors to the end of a scope).
// And the library calls' workspaces in segments the tagger counts whole as a library workspace
// (rule `library-workspace`: a workspace operand of the calls, no tensor recovered), one request per
// call from its begin to its end: a framework that asks its pool for a call's workspace releases it
// after the call, and the block then serves other requests (PyTorch's cublasGemmEx workspace of
// mlp_train.py at batch 2048 holds activations between calls).
struct PoolReadings {
    std::vector<PoolTensor> released;        // batch-sized recoveries are requests of their own
    std::vector<PoolTensor> held;            // joined as the fixed-size tensors are
    std::vector<PoolTensor> workspaces;      // per call, in segments counted whole as a library workspace
    std::vector<size_t> workspace_segments;  // those segments (indices among the first real_count)
    // A kernel outside the library calls used one of those segments: tensors lay in it between the
    // calls, which the model does not place (no sub-ranges in a segment counted whole).
    bool workspace_used_outside_calls = false;
    // PyTorch's expandable segments: the mapped pages joined into their segments. The tensors of a
    // mapped segment are placed on it (PoolTensor::segment: its first page's index; offsets in it).
    MappedSegments mapped;
};

// Sub-ranges of the allocations counted by their sub-ranges (`by_subrange`, among the first
// `real_count`), times clamped into their segment's life, the placement rules applied, released at
// their last use: both readings.
PoolReadings read_pool_tensors(const TraceFile& trace, const std::vector<Allocation>& allocations, size_t real_count);

// The two rules on one segment's tensors (exposed for tests); the continuation of batch-sized
// tensors only with `join_step_local` (the held reading).
void order_by_placement(std::vector<PoolTensor>& tensors, bool join_step_local = true);

// Data a library carries between its kernels through its workspace (one segment's tensors): a tensor
// the tagger recovered on exactly the extent of a call's workspace in the segment (same offset and
// bytes; docs/tagging.md: written by one kernel, read by another) lies in the block the library asked
// the pool for, so its request is the workspace's, of the library's size whatever the batch: it is
// counted as a library workspace (PyTorch's per-call cuBLASLt workspace of 32 MiB, whose partial
// results the tagger sees carried between the GEMM's kernels). Not a tensor a library call takes as
// a matrix operand (`matrix_operands`: the segment's a, b, c uses, sorted by time) within its life: a
// workspace is the call's private scratch, so such a tensor is a request of the program's that took
// the released block (mlp_train.py at batch 512: 1 MiB activations on the 1 MiB cuBLASLt
// workspaces' extents, read by the next GEMM). And only a tensor whose bytes a call's workspace on
// exactly its extent held just before it: a library's data exists once its call wrote it, so a tensor
// placed there before (or after another tensor) is the program's (transformer_train.py --layers 9 at
// batch 128: forward activations of 1 MiB on the extents later steps' 1 MiB workspaces take).
void keep_workspace_data(std::vector<PoolTensor>& tensors, const std::vector<SegmentUse>& matrix_operands = {});

// Views of one request (one segment's tensors, `smallest`: the least request its pool serves): a
// large-pool segment serves no request of 1 MiB or less, so such tensors placed end to end there,
// their lives overlapping, are views the tagger recovered apart of one request (one GEMM's output
// holding an attention's query, key and value), joined into it.
void join_views(std::vector<PoolTensor>& tensors, int64_t smallest);

// The request before the call: a tensor (not a library workspace) whose first use lies inside a
// library call of its process (`calls`: [begin, end) by begin) was requested before the call began,
// as the call's output is (PyTorch allocates a GEMM's output, then calls the library, which then
// asks for its workspace).
void request_before_calls(std::vector<PoolTensor>& tensors, const std::vector<std::pair<int64_t, int64_t>>& calls);

// The release at the last use (one segment's tensors, after the two rules; `uses` sorted by time):
// the tagger's end of a tensor is an upper bound (the moment its space is next used or its step ends);
// the host releases a tensor to the pool once it has queued the last work using it, so its release
// in the pool's order is that work's host time. A tensor with no use inside its bytes keeps its end.
// Workspace data over what the small pool serves (`workspace_data`, a large-pool block such as
// PyTorch's 32 MiB cuBLASLt workspace) is used only by the words naming its address: a call's
// workspace is private to the call and the pool takes the block back when the call ends, so a
// word naming it afterwards is a stale one, and a use elsewhere in its extent is another tensor's
// that the pool placed in the freed block (docs/whatif.md, "Workspace data held between the calls").
void end_at_last_use(std::vector<PoolTensor>& tensors, const std::vector<SegmentUse>& uses);

// Written once and never read (one segment's tensors, after the release at the last use): a tensor
// whose life is one instant (a set, or one kernel's write) wrote values for the next tensor placed
// on exactly its bytes, nothing placed there between, to read: that tensor is the one request,
// requested when the write was (a gradient zeroed where it is allocated, accumulated into in
// backward: the tagger names the zeroing alone `other`).
void join_written_once(std::vector<PoolTensor>& tensors);

// The least request a segment's pool serves, given the largest (`largest`, largest_request): a
// large-pool segment serves no request of 1 MiB or less (PyTorch sends those to the small pool), so
// a tensor placed in one was requested with more than 1 MiB, whatever extent the tagger could give
// it; a small-pool segment, 1 byte.
int64_t least_request_bytes(int64_t largest);

// The bytes `t` asks the pool for at the recorded sizes: its extent, or for a bound the least its
// pool serves.
inline int64_t requested_bytes(const PoolTensor& t) {
    return t.bound ? t.least_bytes : t.bytes;
}

}  // namespace tbdprof::analyzer
