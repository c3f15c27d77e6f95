// Every function cufile.h declares, as a weak stub returning CU_FILE_PLATFORM_NOT_SUPPORTED (GPUDirect
// Storage is not simulated). libtorch_cuda.so and libtorch_python.so link libcufile.so.0 for
// torch.cuda.gds; training never calls it. Generated table: cufile.inc (scripts/gen_simgpu_stubs.py,
// from the header of the nvidia-cufile pip package). CUfileError_t is {CUfileOpError err; CUresult
// cu_err;}, returned in one register: the int stub's zero-extended value leaves cu_err CUDA_SUCCESS.
#define TBDSIM_NOT_SUPPORTED 5007  // CU_FILE_PLATFORM_NOT_SUPPORTED (CUFILEOP_BASE_ERR + 7)
#define TBDSIM_NOT_SUPPORTED_NAME "CU_FILE_PLATFORM_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "cufile.inc"
