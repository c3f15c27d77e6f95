// Every function the nvJitLink headers declare, as a weak stub returning NVJITLINK_ERROR_INTERNAL; nvJitLink.cpp (if
// any) replaces the modelled ones. Generated table: nvJitLink.inc (scripts/gen_simgpu_stubs.py).
#define TBDSIM_NOT_SUPPORTED 6  // NVJITLINK_ERROR_INTERNAL
#define TBDSIM_NOT_SUPPORTED_NAME "NVJITLINK_ERROR_INTERNAL"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "nvJitLink.inc"
