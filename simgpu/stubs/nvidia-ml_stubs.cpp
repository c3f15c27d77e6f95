// Every function nvml.h declares, as a weak stub returning NVML_ERROR_NOT_SUPPORTED: the simulated
// driver's management library. PyTorch dlopens libnvidia-ml.so.1, which every real driver installs,
// and calls through what dlsym gives it without checking (expandable segments ask it whether the GPU
// has fabric memory): a library that answers "not supported" is what it handles. Generated table:
// nvidia-ml.inc (scripts/gen_simgpu_stubs.py, from the header of the nvidia-nvml-dev pip package).
#define TBDSIM_NOT_SUPPORTED 3  // NVML_ERROR_NOT_SUPPORTED
#define TBDSIM_NOT_SUPPORTED_NAME "NVML_ERROR_NOT_SUPPORTED"
#include "stub_macros.h"
// The table after the macros that expand it.
#include "nvidia-ml.inc"
