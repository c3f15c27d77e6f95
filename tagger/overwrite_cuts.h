// Cuts of pooled sub-ranges at a library call's overwrite (tagger/pool_tagging.cpp calls it once the
// update is known): data read in a step, then overwritten whole by a library call, was a tensor of
// its own before that call.
#pragma once

#include "model.h"
#include "rules.h"

#include <vector>

namespace tbdprof::tagger {

// Whether `u` is the output operand of its work's library call, overwritten by it (a GEMM's C: no
// beta is recorded, so it counts as overwritten, as in the data flow; not axpy's y, which it reads).
bool library_output(const TraceModel& m, const PointerUse& u);

// Where to cut a sub-range whose uses (`uses`, indices into m.pointer_uses) the update reads from
// `first_update` on: the first library call in that step, before `first_update` and outside the
// update, that overwrites the sub-range at its start (a GEMM's C) after other work of the step read
// it (a read-only kernel pointer, a product call's input, a copy's source). What was read there
// was a tensor the call's result did not carry on: a caching allocator gives the space of an
// activation freed in backward to the weight gradient the next GEMM writes. Returns
// r.optimizer_work.size() for no cut. `step`: each work item's step (-1 outside the steps).
size_t overwrite_after_read(const TraceModel& m, const TagResult& r, const std::vector<int>& step,
                            const std::vector<size_t>& uses, size_t first_update);

}  // namespace tbdprof::tagger
