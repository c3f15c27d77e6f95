// Streams and events. Runtime stream and event handles are the driver's (cudaStream_t is CUstream,
// and the special handles cudaStreamLegacy / cudaStreamPerThread equal CU_STREAM_LEGACY /
// CU_STREAM_PER_THREAD), so the runtime passes them through; the _ptsz variants use the per-thread
// driver table, which treats handle 0 as the calling thread's default stream.
#include "context.h"

using namespace tbdsim::rt;

extern "C" {
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int* flags);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int* priority);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long* streamId);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int* device);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                                            cudaStreamCaptureStatus* pCaptureStatus);
TBDSIM_CUDART_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* userData);
TBDSIM_CUDART_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                                            void* userData, unsigned int flags);
TBDSIM_CUDART_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
TBDSIM_CUDART_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                               unsigned int flags);
}

namespace {

constexpr unsigned kEventFlagMask = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;

// Defines the plain and the _ptsz entry point of a stream-ordered call from one body; the body sees
// the parameters and `api`, the driver table of the variant.
#define TBDSIM_RT_STREAM_PAIR(name, params, args, ...)                                                   \
    static cudaError_t name##_impl(bool per_thread, TBDSIM_RT_UNPAREN params) {                          \
        return api_call(per_thread, [&](const DriverApi& api) -> cudaError_t __VA_ARGS__);               \
    }                                                                                                    \
    TBDSIM_CUDART_EXPORT cudaError_t name(TBDSIM_RT_UNPAREN params) {                                    \
        return name##_impl(false, TBDSIM_RT_UNPAREN args);                                               \
    }                                                                                                    \
    cudaError_t name##_ptsz(TBDSIM_RT_UNPAREN params) { return name##_impl(true, TBDSIM_RT_UNPAREN args); }
#define TBDSIM_RT_UNPAREN(...) __VA_ARGS__

struct StreamCallback {
    cudaStreamCallback_t callback;
    void* user_data;
    cudaStream_t stream;
};

// cudaStreamAddCallback's callback also receives the stream and a status; host functions do not.
void run_stream_callback(void* data) {
    auto* callback = static_cast<StreamCallback*>(data);
    callback->callback(callback->stream, cudaSuccess, callback->user_data);
    delete callback;
}

}  // namespace

TBDSIM_RT_STREAM_PAIR(cudaStreamSynchronize, (cudaStream_t stream), (stream),
                      { return call_driver(api.cuStreamSynchronize, stream); })

TBDSIM_RT_STREAM_PAIR(cudaStreamQuery, (cudaStream_t stream), (stream),
                      { return call_driver(api.cuStreamQuery, stream); })

TBDSIM_RT_STREAM_PAIR(cudaStreamWaitEvent, (cudaStream_t stream, cudaEvent_t event, unsigned int flags),
                      (stream, event, flags), { return call_driver(api.cuStreamWaitEvent, stream, event, flags); })

TBDSIM_RT_STREAM_PAIR(cudaStreamGetFlags, (cudaStream_t hStream, unsigned int* flags), (hStream, flags),
                      { return call_driver(api.cuStreamGetFlags, hStream, flags); })

TBDSIM_RT_STREAM_PAIR(cudaStreamGetPriority, (cudaStream_t hStream, int* priority), (hStream, priority),
                      { return call_driver(api.cuStreamGetPriority, hStream, priority); })

TBDSIM_RT_STREAM_PAIR(cudaStreamGetId, (cudaStream_t hStream, unsigned long long* streamId), (hStream, streamId),
                      { return call_driver(api.cuStreamGetId, hStream, streamId); })

TBDSIM_RT_STREAM_PAIR(cudaStreamGetDevice, (cudaStream_t hStream, int* device), (hStream, device), {
    CUdevice handle = 0;
    cudaError_t error = call_driver(api.cuStreamGetDevice, hStream, &handle);
    if (error == cudaSuccess) *device = static_cast<int>(handle);
    return error;
})

// The simulated driver may not model graph capture; then no stream is ever capturing.
TBDSIM_RT_STREAM_PAIR(cudaStreamIsCapturing, (cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus),
                      (stream, pCaptureStatus), {
                          if (pCaptureStatus == nullptr) return cudaErrorInvalidValue;
                          if (api.cuStreamIsCapturing == nullptr) {
                              *pCaptureStatus = cudaStreamCaptureStatusNone;
                              return cudaSuccess;
                          }
                          CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
                          cudaError_t error = call_driver(api.cuStreamIsCapturing, stream, &status);
                          if (error == cudaSuccess) *pCaptureStatus = static_cast<cudaStreamCaptureStatus>(status);
                          return error;
                      })

TBDSIM_RT_STREAM_PAIR(cudaLaunchHostFunc, (cudaStream_t stream, cudaHostFn_t fn, void* userData),
                      (stream, fn, userData), {
                          if (fn == nullptr) return cudaErrorInvalidValue;
                          return call_driver(api.cuLaunchHostFunc, stream, fn, userData);
                      })

TBDSIM_RT_STREAM_PAIR(cudaStreamAddCallback,
                      (cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned int flags),
                      (stream, callback, userData, flags), {
                          if (callback == nullptr || flags != 0) return cudaErrorInvalidValue;
                          auto* pending = new StreamCallback{callback, userData, stream};
                          cudaError_t error = call_driver(api.cuLaunchHostFunc, stream, run_stream_callback, pending);
                          if (error != cudaSuccess) delete pending;
                          return error;
                      })

TBDSIM_RT_STREAM_PAIR(cudaEventRecord, (cudaEvent_t event, cudaStream_t stream), (event, stream),
                      { return call_driver(api.cuEventRecord, event, stream); })

TBDSIM_RT_STREAM_PAIR(cudaEventRecordWithFlags, (cudaEvent_t event, cudaStream_t stream, unsigned int flags),
                      (event, stream, flags), { return call_driver(api.cuEventRecordWithFlags, event, stream, flags); })

// ---- streams --------------------------------------------------------------------------------------

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags,
                                                              int priority) {
    if (pStream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) return record_error(cudaErrorInvalidValue);
    // cudaStreamNonBlocking is CU_STREAM_NON_BLOCKING.
    return api_call(false, [&](const DriverApi& api) {
        return call_driver(api.cuStreamCreateWithPriority, pStream, flags, priority);
    });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
    if (pStream == nullptr || (flags & ~cudaStreamNonBlocking) != 0) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuStreamCreate, pStream, flags); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuStreamDestroy, stream); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
    if (mode == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) -> cudaError_t {
        if (api.cuThreadExchangeStreamCaptureMode == nullptr) return cudaSuccess;  // no capture modelled
        auto driver_mode = static_cast<CUstreamCaptureMode>(*mode);
        cudaError_t error = call_driver(api.cuThreadExchangeStreamCaptureMode, &driver_mode);
        if (error == cudaSuccess) *mode = static_cast<cudaStreamCaptureMode>(driver_mode);
        return error;
    });
}

// ---- events ---------------------------------------------------------------------------------------

TBDSIM_CUDART_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    const bool interprocess_with_timing = (flags & cudaEventInterprocess) != 0 && (flags & cudaEventDisableTiming) == 0;
    if (event == nullptr || (flags & ~kEventFlagMask) != 0 || interprocess_with_timing) {
        return record_error(cudaErrorInvalidValue);
    }
    // cudaEvent* flags are the CU_EVENT_* flags.
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuEventCreate, event, flags); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) {
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

TBDSIM_CUDART_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuEventSynchronize, event); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuEventQuery, event); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return record_error(cudaErrorInvalidValue);
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuEventElapsedTime, ms, start, end); });
}

TBDSIM_CUDART_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
    return api_call(false, [&](const DriverApi& api) { return call_driver(api.cuEventDestroy, event); });
}
