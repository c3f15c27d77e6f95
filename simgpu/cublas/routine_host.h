// What the generic routines compute on the host: results real cuBLAS returns in host memory (the
// default pointer mode) and the host-scalar rotations. Device memory is host memory on the simulated
// GPU, so the operands' bytes are read in place once the stream has reached the call.
#pragma once

#include "routine.h"

namespace tbdsim::cublas {

// iamax/iamin (1-based index), dot/dotc, nrm2 and asum (Ex forms: in args.result_type) into args.result.
void reduce_on_host(Family family, Elem elem, const RoutineArgs& args);
// The result of an empty reduction: 0.
void zero_host_result(Family family, Elem elem, const RoutineArgs& args);
// rotg and rotmg with host scalars, as the reference BLAS defines them.
void rotation_on_host(Family family, Elem elem, const RoutineArgs& args);

}  // namespace tbdsim::cublas
