// Which device and context a runtime call works on. As in the real runtime, every thread has a current
// device (0 until cudaSetDevice), and the first call that needs the device makes that device's primary
// context current on the thread (cuDevicePrimaryCtxRetain once per process, cuCtxSetCurrent per thread).
#pragma once

#include <cuda_runtime_api.h>

#include "driver_table.h"
#include "errors.h"

namespace tbdsim::rt {

// Loads the driver if needed and makes the current device's primary context current on this thread.
cudaError_t bind_current_context();

// The calling thread's current device (the runtime ordinal, equal to the driver ordinal here).
int current_device();

// Number of devices the driver reported; 0 before a successful driver_init().
int device_count();

// cudaSetDevice: validates, then selects and initialises (CUDA 12+ initialises eagerly).
cudaError_t select_device(int device);

// cudaDeviceReset: resets the current device's primary context; the next call retains it again.
cudaError_t reset_current_device();

// The CUdevice handle of a runtime ordinal, or cudaErrorInvalidDevice.
cudaError_t device_handle(int device, CUdevice* handle);

// Shape of (almost) every runtime entry point: bind the context, run the body with the driver table
// of the wanted stream semantics, remember a failure as the thread's last error.
template <class Body>
cudaError_t api_call(bool per_thread_stream, Body&& body) {
    RuntimeCallScope runtime_call;
    cudaError_t error = bind_current_context();
    if (error == cudaSuccess) error = body(driver_api(per_thread_stream));
    return record_error(error);
}

// For entry points that need the driver but no context (device queries, version queries).
template <class Body>
cudaError_t api_call_without_context(Body&& body) {
    RuntimeCallScope runtime_call;
    cudaError_t error = driver_init();
    if (error == cudaSuccess) error = body(driver_api(false));
    return record_error(error);
}

}  // namespace tbdsim::rt
