// Every function the cusolver headers declare, as a weak stub returning CUSOLVER_STATUS_NOT_SUPPORTED; cusolver.cpp (if
// any) replaces the modelled ones. Generated table: cusolver.inc (scripts/gen_simgpu_stubs.py).
#define TBDSIM_NOT_SUPPORTED 9  // CUSOLVER_STATUS_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "CUSOLVER_STATUS_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "cusolver.inc"
