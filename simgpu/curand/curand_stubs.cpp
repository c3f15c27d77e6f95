// Every function curand.h declares, as a weak stub returning CURAND_STATUS_TYPE_ERROR (cuRAND has no
// "not supported" status; the type error is what it answers for an operation the generator cannot
// do); curand.cpp replaces the modelled ones.
#define TBDSIM_NOT_SUPPORTED 103  // CURAND_STATUS_TYPE_ERROR
#define TBDSIM_NOT_SUPPORTED_NAME "CURAND_STATUS_TYPE_ERROR"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "curand.inc"
