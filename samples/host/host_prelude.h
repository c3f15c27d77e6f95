// Host execution of the styled samples, for checking their numerics where no GPU computes (the
// simulated GPU times kernels without running them). The build turns a sample's CUDA source into
// C++ (samples/host/to_host.pl: `kernel<<<grid, block, shmem, stream>>>(args)` becomes
// `tbdhost::launch(...)`), compiles it with the host compiler with this header forced in first, and
// links it with host_cuda.cpp, which implements the CUDA runtime, cuBLAS and cuBLASLt calls the
// samples make on host memory. Kernels run sequentially, thread by thread, so only kernels whose
// threads do not wait for each other (no __syncthreads, no shared memory) can run this way; every
// kernel of the styled samples is written so.
#pragma once

// Before any CUDA header: kernels and device functions become plain functions, and the built-in
// index variables writable globals (device_launch_parameters.h takes __STORAGE__ when defined).
#define __global__
#define __device__
#define __host__
#define __STORAGE__ extern

#include <cuda_runtime.h>
#include <device_launch_parameters.h>

#include <algorithm>
#include <cmath>

using std::max;
using std::min;

inline float rsqrtf(float x) {
    return 1.0f / std::sqrt(x);
}
inline float atomicAdd(float* address, float value) {
    float old = *address;
    *address = old + value;
    return old;
}

namespace tbdhost {

struct LaunchConfig {
    dim3 grid;
    dim3 block;
    size_t shared_bytes = 0;
    cudaStream_t stream = nullptr;
};

// Runs every thread of every block of the grid, one after another.
template <typename Kernel, typename... Args>
void launch(const LaunchConfig& config, Kernel kernel, Args... args) {
    gridDim = config.grid;
    blockDim = config.block;
    for (unsigned bz = 0; bz < config.grid.z; ++bz)
        for (unsigned by = 0; by < config.grid.y; ++by)
            for (unsigned bx = 0; bx < config.grid.x; ++bx)
                for (unsigned tz = 0; tz < config.block.z; ++tz)
                    for (unsigned ty = 0; ty < config.block.y; ++ty)
                        for (unsigned tx = 0; tx < config.block.x; ++tx) {
                            blockIdx = uint3{bx, by, bz};
                            threadIdx = uint3{tx, ty, tz};
                            kernel(args...);
                        }
}

}  // namespace tbdhost
