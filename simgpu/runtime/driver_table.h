// The driver entry points the runtime uses, resolved the way the real libcudart resolves them: dlopen
// libcuda.so.1, take cuGetProcAddress_v2, and ask it for every function by its base name, the runtime's
// CUDA version and a stream-semantics flag. Two tables exist: the legacy one (plain runtime entry
// points) and the per-thread one (the *_ptsz / *_ptds runtime entry points get the driver's
// *_ptsz / *_ptds variants). The runtime never links against libcuda.
#pragma once

#include <cuda.h>
#include <cudaProfiler.h>
#include <cuda_runtime_api.h>

namespace tbdsim::rt {

// The CUDA version the runtime asks the driver for (CUDART_VERSION of the real 13.0 runtime).
inline constexpr int kRuntimeCudaVersion = 13000;

// X-macro list of driver functions, by the names cuda.h declares. Each name is a macro in cuda.h that
// expands to the current ABI version (cuMemAlloc -> cuMemAlloc_v2), so `decltype(&::name)` is the
// right prototype while `#name` is the base name cuGetProcAddress expects.
#define TBDSIM_RT_DRIVER_FUNCTIONS(X)                                                                    \
    X(cuInit) X(cuDriverGetVersion) X(cuGetExportTable) X(cuDeviceGet) X(cuDeviceGetCount)               \
    X(cuDeviceGetName) X(cuDeviceTotalMem) X(cuDeviceGetAttribute) X(cuDeviceGetUuid)                    \
    X(cuDeviceCanAccessPeer) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxReset)                      \
    X(cuDevicePrimaryCtxSetFlags) X(cuDevicePrimaryCtxGetState) X(cuCtxSetCurrent) X(cuCtxGetCurrent)    \
    X(cuCtxSynchronize) X(cuCtxGetLimit) X(cuCtxSetLimit) X(cuCtxGetStreamPriorityRange)                 \
    X(cuMemGetInfo) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocHost)    \
    X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemAllocManaged) X(cuMemAllocPitch)                           \
    X(cuMemHostGetDevicePointer) X(cuMemHostGetFlags) X(cuPointerGetAttributes) X(cuMemcpy)              \
    X(cuMemcpyAsync) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync)                \
    X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemcpy2D) X(cuMemcpy2DAsync) X(cuMemsetD8)             \
    X(cuMemsetD8Async) X(cuMemsetD2D8) X(cuMemsetD2D8Async) X(cuStreamCreate)                            \
    X(cuStreamCreateWithPriority) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery)             \
    X(cuStreamWaitEvent) X(cuStreamGetFlags) X(cuStreamGetPriority) X(cuStreamGetId) X(cuStreamGetDevice)\
    X(cuStreamIsCapturing) X(cuThreadExchangeStreamCaptureMode) X(cuLaunchHostFunc) X(cuEventCreate)     \
    X(cuEventRecord) X(cuEventRecordWithFlags) X(cuEventSynchronize) X(cuEventQuery)                     \
    X(cuEventElapsedTime) X(cuEventDestroy) X(cuLibraryLoadData) X(cuLibraryUnload)                      \
    X(cuLibraryGetKernel) X(cuLibraryGetGlobal) X(cuLibraryGetManaged) X(cuKernelGetFunction)            \
    X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuFuncGetParamInfo) X(cuLaunchKernel)                  \
    X(cuLaunchKernelEx) X(cuLaunchCooperativeKernel) X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) \
    X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuStreamGetCaptureInfo) X(cuGraphInstantiateWithFlags) \
    X(cuGraphLaunch) X(cuGraphUpload) X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuGraphGetNodes)        \
    X(cuMemAdvise) X(cuMemPrefetchAsync) X(cuMemHostRegister) X(cuMemHostUnregister)                     \
    X(cuCtxEnablePeerAccess) X(cuCtxDisablePeerAccess) X(cuMemcpyPeer) X(cuMemcpyPeerAsync)             \
    X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemAllocFromPoolAsync) X(cuMemPoolSetAttribute)           \
    X(cuMemPoolGetAttribute) X(cuMemPoolTrimTo) X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool)         \
    X(cuDeviceSetMemPool) X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle) \
    X(cuIpcGetEventHandle) X(cuIpcOpenEventHandle) \
    X(cuGraphCreate) X(cuGraphAddKernelNode) X(cuGraphKernelNodeSetParams) X(cuGraphExecKernelNodeSetParams) \
    X(cuGraphAddMemsetNode) X(cuGraphAddEmptyNode) X(cuGraphAddDependencies) X(cuGraphNodeGetType)          \
    X(cuGraphGetRootNodes) X(cuGraphAddEventRecordNode) X(cuGraphAddEventWaitNode)                           \
    X(cuGraphEventRecordNodeGetEvent) X(cuGraphEventRecordNodeSetEvent) X(cuGraphEventWaitNodeGetEvent)      \
    X(cuGraphEventWaitNodeSetEvent) X(cuGraphExecEventRecordNodeSetEvent) X(cuGraphExecEventWaitNodeSetEvent) \
    X(cuGraphAddHostNode) X(cuGraphHostNodeGetParams) X(cuGraphHostNodeSetParams)                            \
    X(cuGraphExecHostNodeSetParams) X(cuGraphAddChildGraphNode) X(cuGraphChildGraphNodeGetGraph)             \
    X(cuGraphExecUpdate) X(cuGraphExecChildGraphNodeSetParams) \
    X(cuProfilerStart) X(cuProfilerStop)

// Graph memory nodes (graph_memory.cpp): a list of its own, kept out of clang-format's reflow of the
// list above.
// clang-format off
#define TBDSIM_RT_GRAPH_MEMORY_FUNCTIONS(X)                                                              \
    X(cuGraphAddMemAllocNode) X(cuGraphMemAllocNodeGetParams) X(cuGraphAddMemFreeNode)                   \
    X(cuGraphMemFreeNodeGetParams) X(cuDeviceGraphMemTrim) X(cuDeviceGetGraphMemAttribute)                \
    X(cuDeviceSetGraphMemAttribute)
// clang-format on

struct DriverApi {
    // cuGetProcAddress_v2 itself, taken with dlsym (it is how everything else is found).
    decltype(&::cuGetProcAddress_v2) getProcAddress = nullptr;
#define TBDSIM_RT_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
    TBDSIM_RT_DRIVER_FUNCTIONS(TBDSIM_RT_DECLARE_MEMBER)
    TBDSIM_RT_GRAPH_MEMORY_FUNCTIONS(TBDSIM_RT_DECLARE_MEMBER)
#undef TBDSIM_RT_DECLARE_MEMBER
};

// Loads the driver and calls cuInit(0) once per process. cudaSuccess, or the error every runtime call
// reports from then on (cudaErrorInsufficientDriver when libcuda.so.1 cannot be loaded).
cudaError_t driver_init();

// The error of an initialisation that was attempted and failed; cudaSuccess otherwise.
cudaError_t driver_init_failure();

// The table for the plain (legacy default stream) or the per-thread (_ptsz/_ptds) entry points.
// Valid only after driver_init() returned cudaSuccess.
const DriverApi& driver_api(bool per_thread_stream);

// Marks one runtime entry point, outermost only, for CUPTI's RUNTIME activity records: the simulated
// driver hears the call begin and end (TbdsimPrivateApi::runtime_call_boundary) as the real runtime
// reports its calls to CUPTI. Until the driver is loaded nothing is said; an end is said only for a
// beginning that was.
class RuntimeCallScope {
public:
    RuntimeCallScope();
    ~RuntimeCallScope();
    RuntimeCallScope(const RuntimeCallScope&) = delete;
    RuntimeCallScope& operator=(const RuntimeCallScope&) = delete;

private:
    bool announced_ = false;
};

}  // namespace tbdsim::rt
