// Size evidence that holds for one tenant of a piece only (change 50, docs/tagging.md). A library
// call's operand gives a lower bound on the tensor at its address (a GEMM's C: m x n elements of its
// type), which the sub-ranges take as the piece's size. Where the uses of one start show that the
// bound came with one tenant among several that nothing cut apart, the bound says nothing of the
// others, which may be larger (under autocast a BF16 product's space goes next to an FP32 value twice
// its size, a layer norm's output). Such a piece's extent runs to the next start in use instead
// (assign_extents, SubRange::bound_of_one_tenant).
#pragma once

#include "model.h"

#include <vector>

namespace tbdprof::tagger {

// Whether `u` is the output operand of its work's library call and the call overwrites it (a GEMM's
// C, which the trace records no beta for, counts as overwritten, as in the data flow; axpy, scal and
// ger read it first).
bool library_overwrite(const TraceModel& m, const PointerUse& u);

// Whether `u` is a plain kernel's pointer held in one word that is a parameter of its own, declared
// writable (a mangled name's pointer not to const: PointerUse::access Write), not a member of a
// by-value aggregate (TraceModel::aggregate_words), whose members say nothing of constness.
bool declared_write(const TraceModel& m, const PointerUse& u);

// Whether `u`, the next use of a start after `previous`, shows that the size evidence of the piece
// holding the start (whose first use there is `first`; `sized`: it has size evidence before `u`)
// belongs to one tenant only:
// - the piece began with a library call's overwrite (the bound is that product's), other work read
//   the product (`previous`: output_slots.h, reads_value), and a plain kernel now writes the start
//   through a declared output (`u`, declared_write): a new value the bound does not measure;
// - or the piece has no size evidence yet, other work read what it held (`previous` a read), and a
//   library call overwrites the start (`u`): the bound arrives with a later tenant.
// `outputs`: per kernel parameter word, whether it starts values (output_slots.h).
bool bound_of_one_tenant(const TraceModel& m, const std::vector<bool>& outputs, const PointerUse& first,
                         const PointerUse& previous, const PointerUse& u, bool sized);

}  // namespace tbdprof::tagger
