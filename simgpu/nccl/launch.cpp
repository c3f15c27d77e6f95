#include "launch.h"

#include <map>
#include <mutex>
#include <utility>

#include "comm.h"
#include "driver_link.h"

extern "C" const unsigned char tbdsim_nccl_fatbin[];
extern "C" const std::size_t tbdsim_nccl_fatbin_size;

namespace tbdsim::nccl {
namespace {

// Makes the communicator's device current for one call when the caller's context belongs to another
// device (one thread driving several ranks), and restores the caller's context afterwards.
class DeviceScope {
public:
    DeviceScope(const Driver& d, int device) : d_(d) {
        if (d.base->init(0) != CUDA_SUCCESS || d.base->ctx_get_current(&previous_) != CUDA_SUCCESS) return;
        CUdevice current = -1;
        if (previous_ != nullptr && d.ctx_get_device(&current) == CUDA_SUCCESS && current == device) {
            ok_ = true;
            return;
        }
        CUcontext primary = nullptr;
        if (d.base->device_get(&device_, device) != CUDA_SUCCESS ||
            d.base->primary_ctx_retain(&primary, device_) != CUDA_SUCCESS)
            return;
        retained_ = true;
        ok_ = d.base->ctx_set_current(primary) == CUDA_SUCCESS;
        switched_ = ok_;
    }
    ~DeviceScope() {
        if (switched_) d_.base->ctx_set_current(previous_);
        if (retained_) d_.base->primary_ctx_release(device_);
    }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;
    bool ok() const { return ok_; }

private:
    const Driver& d_;
    CUcontext previous_ = nullptr;
    CUdevice device_ = 0;
    bool ok_ = false, retained_ = false, switched_ = false;
};

struct Modules {
    std::mutex mutex;
    std::map<CUcontext, CUmodule> by_context;  // never unloaded: contexts outlive communicators
    std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
};

Modules& modules() {
    static auto* instance = new Modules;
    return *instance;
}

CUresult function_for(const Driver& d, const std::string& kernel, CUfunction* out) {
    CUcontext context = nullptr;
    if (CUresult rc = d.base->ctx_get_current(&context); rc != CUDA_SUCCESS) return rc;
    Modules& m = modules();
    std::lock_guard lock(m.mutex);
    CUmodule& module = m.by_context[context];
    if (module == nullptr) {
        if (CUresult rc = d.base->module_load_data(&module, tbdsim_nccl_fatbin); rc != CUDA_SUCCESS) {
            m.by_context.erase(context);
            return rc;
        }
    }
    CUfunction& function = m.functions[{module, kernel}];
    if (function == nullptr) {
        if (CUresult rc = d.base->module_get_function(&function, module, kernel.c_str()); rc != CUDA_SUCCESS) {
            m.functions.erase({module, kernel});
            return rc;
        }
    }
    *out = function;
    return CUDA_SUCCESS;
}

}  // namespace

ncclResult_t stream_arrival_ns(const ncclComm& comm, CUstream stream, uint64_t* arrival_ns) {
    const Driver* d = driver();
    if (d == nullptr) return ncclUnhandledCudaError;
    DeviceScope scope(*d, comm.device);
    if (!scope.ok()) return ncclUnhandledCudaError;
    return d->stream_ready_at_ns(stream, arrival_ns) == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
}

bool stream_capturing(const ncclComm& comm, CUstream stream) {
    const Driver* d = driver();
    if (d == nullptr) return false;
    DeviceScope scope(*d, comm.device);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return scope.ok() && d->stream_is_capturing(stream, &status) == CUDA_SUCCESS &&
           status != CU_STREAM_CAPTURE_STATUS_NONE;
}

ncclResult_t launch_collective(const ncclComm& comm, CUstream stream, const std::string& kernel,
                               const TbdsimNcclArgs& args, uint64_t arrival_ns,
                               uint64_t (*resolve_end)(uint64_t start_ns, void* user), void* user) {
    const Driver* d = driver();
    if (d == nullptr) return ncclUnhandledCudaError;
    DeviceScope scope(*d, comm.device);
    CUfunction function = nullptr;
    if (!scope.ok() || function_for(*d, kernel, &function) != CUDA_SUCCESS) return ncclUnhandledCudaError;
    TbdsimNcclArgs copy = args;
    void* arguments[] = {&copy};
    // One block per channel, as NCCL launches: the count does not change the modelled time.
    constexpr unsigned kChannels = 16, kThreads = 512;
    d->annotate_next_launch_collective(arrival_ns, resolve_end, user);
    CUresult rc = d->base->launch_kernel(function, kChannels, 1, 1, kThreads, 1, 1, 0, stream, arguments, nullptr);
    return rc == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
}

}  // namespace tbdsim::nccl
