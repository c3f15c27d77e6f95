// Every function nccl.h declares, as a weak stub returning ncclInvalidUsage (NCCL has no "not
// supported" status; invalid usage is what it returns for a feature a build lacks); the modelled
// ones (the other files of this folder) replace them. Generated table: nccl.inc
// (scripts/gen_simgpu_stubs.py).
#define TBDSIM_NOT_SUPPORTED 5  // ncclInvalidUsage
#define TBDSIM_NOT_SUPPORTED_NAME "ncclInvalidUsage"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "nccl.inc"
