// The modelled part of the simulated libnvJitLink.so.13: its version. Linking is not modelled: every
// other function (both the versioned __nvJitLink*_13_0 entry points and the plain names the header
// wraps them in) returns NVJITLINK_ERROR_INTERNAL (the generated stubs).
#include <cuda.h>
#include <nvJitLink.h>

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

TBD_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int* major, unsigned int* minor) {
    if (major == nullptr || minor == nullptr) return NVJITLINK_ERROR_NULL_INPUT;
    *major = CUDA_VERSION / 1000;
    *minor = CUDA_VERSION % 1000 / 10;
    return NVJITLINK_SUCCESS;
}
