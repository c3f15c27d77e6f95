// The context a cuBLAS or cuBLASLt handle works in. Like the runtime inside the real libraries, a
// handle created with no context current makes device 0's primary context current (and releases it
// again when destroyed).
#pragma once

#include <cuda.h>

namespace tbdsim::blas {

struct DriverEntryPoints;

struct BoundContext {
    CUcontext context = nullptr;
    CUdevice device = 0;
    bool retained_primary_context = false;  // we made the primary context current; release on destroy
};

// Initializes the driver and binds `out` to the current context. False when the driver refuses.
bool bind_current_context(const DriverEntryPoints& driver, BoundContext* out);
void release_bound_context(const DriverEntryPoints& driver, const BoundContext& bound);

}  // namespace tbdsim::blas
