// A second shared object that uses NVTX: nvtx3 keeps its function table per shared object, so this
// library attaches to the tool separately from the program (a second InitializeInjectionNvtx2 call).
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) void nvtx_helper_range(const char* name) {
    nvtxRangePushA(name);
    nvtxRangePop();
}
