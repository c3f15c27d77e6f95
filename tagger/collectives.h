// Collective communication calls (NCCL: all-reduce, reduce-scatter, reduce, all-gather, broadcast)
// and the roles of their operands. A collective's documented semantics relate its send buffer
// (library_calls.a) to its receive buffer (library_calls.c): a reduction sums every rank's input
// into the output, a gather copies every rank's input into the output. The role of one side then
// says the role of the other, whatever framework issued the call (DDP's in-place all-reduce of a
// bucket, ZeRO's and FSDP's reduce-scatter into a shard and all-gather of the parameters).
#pragma once

#include "dataflow.h"
#include "model.h"
#include "rules.h"

#include <string_view>
#include <vector>

namespace tbdprof::tagger {

// The kind of a library call by its library_calls.op ('nccl_all_reduce' ...); None for others.
Collective collective_of(std::string_view op);

// Whether work item `w` ran a collective that reduces across ranks (all-reduce, reduce-scatter,
// reduce). Such a call communicates gradients (or a loss, a norm); it is never the optimizer's own
// work, which the update's extension backwards (rules.cpp, joins_update) must not take in.
bool is_reduction(const TraceModel& m, const WorkItem& w);

// Tags untagged operands of the collectives inside the steps from the tag of their other side:
//  - the send buffer of a reduction whose receive buffer is gradients, written in the step by other
//    work before the call (backward): this rank's gradients, before the ranks' are summed
//    (rule `reduced-into-gradients`; a ZeRO/FSDP gradient bucket reduce-scattered into a shard);
//  - the receive buffer of a gather whose send buffer is weights, read in the step by other work
//    after the call: the parameters gathered from every rank's shard (rule `gathered-weights`);
//  - the buffer of an in-place reduction filled in the step before the call (by kernels, or by
//    copies) whose reduced contents go to the update (`optimizer_work` reads it, or a copy moves it
//    into gradients): DDP's gradient bucket (rule `reduced-gradient-bucket`).
// Repeated until nothing changes (a reduce-scatter inside a node feeding an all-reduce across
// nodes). Returns how many buffers it tagged.
size_t tag_collective_operands(const TraceModel& m, const DataFlow& flow, const std::vector<bool>& optimizer_work,
                               std::vector<Tag>& tags);

}  // namespace tbdprof::tagger
