// Every function the cuDNN 9 headers declare, as a weak stub returning CUDNN_STATUS_NOT_SUPPORTED;
// the modelled ones (the other files here) replace theirs.
#define TBDSIM_NOT_SUPPORTED 3000  // CUDNN_STATUS_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "CUDNN_STATUS_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "cudnn.inc"
