// Temporaries that several kernels and library calls of one operation share (docs/tagging.md,
// "Operation temporaries"): packed copies made for a GEMM, the results of GEMMs on them that the
// operation unpacks or consumes itself, partial sums reduced in the same operation.
#pragma once

#include "dataflow.h"
#include "model.h"

#include <vector>

namespace tbdprof::tagger {

// An operation's work is short: a buffer alive across more work items than this is not one of its
// temporaries (a value kept for backward spans the rest of forward and part of backward).
inline constexpr size_t kMaxOperationWork = 32;

// Extends `known` (buffers already known to be temporaries of one operation) with the buffers that
// data flow and allocation order show to be private to the same operations. Only `candidate`
// buffers are considered; `step_local` says which were allocated and freed by the program inside
// one iteration or outside all of them (a validation pass); only real frees count: a tensor's end
// inferred inside a pooled segment is no evidence.
std::vector<bool> find_operation_temporaries(const TraceModel& m, const DataFlow& flow,
                                             const std::vector<bool>& step_local, const std::vector<bool>& candidate,
                                             std::vector<bool> known);

// A temporary is freed inside its operation, so no later than the step-local buffers (allocated before
// it) the work that
// made it takes from outside (the operation's inputs, which its caller frees after the operation);
// an operation's output outlives them. `producer` made `a`; buffers in `known` are the operation's own.
bool freed_before_inputs(const TraceModel& m, const WorkItem& producer, int32_t a, const std::vector<bool>& known,
                         const std::vector<bool>& step_local);
// The same for `a`'s first user in its life; true when the trace has no free to judge by. A tensor
// inside a pooled segment is judged by its last use, as are its maker's inputs there.
bool freed_before_producer_inputs(const TraceModel& m, const DataFlow& flow, int32_t a,
                                  const std::vector<bool>& step_local);

}  // namespace tbdprof::tagger
