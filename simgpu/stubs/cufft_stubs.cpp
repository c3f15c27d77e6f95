// Every function the cufft headers declare, as a weak stub returning CUFFT_NOT_SUPPORTED; cufft.cpp (if any) replaces
// the modelled ones. Generated table: cufft.inc (scripts/gen_simgpu_stubs.py).
#define TBDSIM_NOT_SUPPORTED 16  // CUFFT_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "CUFFT_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "cufft.inc"
