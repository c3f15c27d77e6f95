// Every function the nvrtc headers declare, as a weak stub returning NVRTC_ERROR_INVALID_PROGRAM; nvrtc.cpp (if any)
// replaces the modelled ones. Generated table: nvrtc.inc (scripts/gen_simgpu_stubs.py).
#define TBDSIM_NOT_SUPPORTED 4  // NVRTC_ERROR_INVALID_PROGRAM
#define TBDSIM_NOT_SUPPORTED_NAME "NVRTC_ERROR_INVALID_PROGRAM"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "nvrtc.inc"
