#include "bound_context.h"

#include "driver_entry_points.h"

namespace tbdsim::blas {

bool bind_current_context(const DriverEntryPoints& driver, BoundContext* out) {
    if (driver.init(0) != CUDA_SUCCESS) return false;
    CUcontext current = nullptr;
    if (driver.ctx_get_current(&current) != CUDA_SUCCESS) return false;
    if (current == nullptr) {
        if (driver.device_get(&out->device, 0) != CUDA_SUCCESS ||
            driver.primary_ctx_retain(&current, out->device) != CUDA_SUCCESS) {
            return false;
        }
        out->retained_primary_context = true;
        if (driver.ctx_set_current(current) != CUDA_SUCCESS) return false;
    }
    out->context = current;
    return true;
}

void release_bound_context(const DriverEntryPoints& driver, const BoundContext& bound) {
    if (bound.retained_primary_context) driver.primary_ctx_release(bound.device);
}

}  // namespace tbdsim::blas
