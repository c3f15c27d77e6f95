// A shared library built with nvcc's default, the static CUDA runtime inside it (as the toolkit's
// libnccl.so.2 carries its own): loaded by a program that knows nothing of CUDA
// (static_runtime_loader.cpp), so that tbdprof --sim must blame this library, not the program.
#include <cuda_runtime_api.h>

extern "C" __attribute__((visibility("default"))) int tbd_static_runtime_devices() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : -1;
}
