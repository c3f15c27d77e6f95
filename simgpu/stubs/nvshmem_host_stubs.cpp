// Every function NVSHMEM's public host headers declare, as a weak stub (int results return
// NVSHMEMX_ERROR_NOT_SUPPORTED, pointers NULL). libtorch_cuda.so reaches libnvshmem_host.so.3 through
// libtorch_nvshmem.so for multi-GPU symmetric memory, which a single simulated GPU does not serve.
// Generated table: nvshmem_host.inc (scripts/gen_simgpu_stubs.py, from the headers of the
// nvidia-nvshmem-cu13 pip package). libnvshmem_host.map gives them the symbol version NVSHMEM that
// libtorch_nvshmem.so asks for.
#define TBDSIM_NOT_SUPPORTED 3  // NVSHMEMX_ERROR_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "NVSHMEMX_ERROR_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "nvshmem_host.inc"

// libtorch_nvshmem.so imports one NVSHMEM function that no public header declares, so it must exist
// for the library to load. Its signature is unknown: it is never modelled, only a status stub.
TBDSIM_STUB_STATUS(nvshmem_selected_device_transport)
