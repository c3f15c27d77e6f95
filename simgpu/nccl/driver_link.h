// The driver functions the simulated NCCL uses, resolved the way the real NCCL resolves them:
// dlopen("libcuda.so.1") and cuGetProcAddress (no link-time dependency on the driver or runtime).
// The common ones come from blas_common; this adds the device queries and the simulated driver's
// private entry points for collectives (stream readiness, a launch that ends at a given time).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "driver_entry_points.h"

namespace tbdsim::nccl {

struct Driver {
    const blas::DriverEntryPoints* base = nullptr;
    decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
    decltype(&::cuDeviceGetName) device_get_name = nullptr;
    decltype(&::cuDeviceGetCount) device_get_count = nullptr;
    // Collectives captured into a graph move no data at capture (docs/simgpu-nccl.md).
    decltype(&::cuStreamIsCapturing) stream_is_capturing = nullptr;
    // From the private table; null on a driver without them (then collectives cannot be timed).
    CUresult (*stream_ready_at_ns)(CUstream stream, uint64_t* ready_ns) = nullptr;
    void (*annotate_next_launch_collective)(uint64_t arrival_ns, uint64_t (*resolve_end)(uint64_t, void*),
                                            void* user) = nullptr;
    uint64_t (*now_ns)() = nullptr;
};

// Resolved once per process; null when the driver lacks any of the above.
const Driver* driver();

}  // namespace tbdsim::nccl
