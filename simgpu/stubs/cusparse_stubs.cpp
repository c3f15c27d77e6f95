// Every function the cusparse headers declare, as a weak stub returning CUSPARSE_STATUS_NOT_SUPPORTED; cusparse.cpp (if
// any) replaces the modelled ones. Generated table: cusparse.inc (scripts/gen_simgpu_stubs.py).
#define TBDSIM_NOT_SUPPORTED 10  // CUSPARSE_STATUS_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "CUSPARSE_STATUS_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "cusparse.inc"
