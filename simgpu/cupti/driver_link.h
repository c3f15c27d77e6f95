// How CUPTI reaches the driver: dlopen("libcuda.so.1"), cuGetProcAddress_v2 by name, everything else
// through it, and the simulated driver's private API (record sinks, clock) through cuGetExportTable.
#pragma once

#include <cuda.h>
#include <simgpu/private_api.h>

namespace tbdsim::cupti {

struct DriverLink {
    decltype(&::cuCtxGetId) ctx_get_id = nullptr;
    decltype(&::cuStreamGetId) stream_get_id = nullptr;
    const TbdsimPrivateApi* private_api = nullptr;
};

// Resolved once per process; null when the driver or its private API is unavailable.
const DriverLink* driver_link();

}  // namespace tbdsim::cupti
