// Every function cusparseLt.h declares, as a weak stub returning CUSPARSE_STATUS_NOT_SUPPORTED (2:4
// structured sparsity is not simulated). libtorch_cuda.so links libcusparseLt.so.0 for
// torch.sparse semi-structured matmuls; dense training never calls it. Generated table:
// cusparseLt.inc (scripts/gen_simgpu_stubs.py, from the header of the nvidia-cusparselt-cu13 pip package).
#define TBDSIM_NOT_SUPPORTED 10  // CUSPARSE_STATUS_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "CUSPARSE_STATUS_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "cusparseLt.inc"
