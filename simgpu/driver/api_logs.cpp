// The driver's error-log callbacks (CUDA 12.9+), which PyTorch registers at start-up. The simulated
// driver writes no log messages, so a registered callback is kept until unregistered and never
// called; registering succeeds as on a real driver.
#include "driver_api.h"

#include <mutex>
#include <set>

namespace {

struct LogCallback {
    CUlogsCallback function;
    void* user_data;
};

std::mutex g_mutex;
std::set<LogCallback*>& callbacks() {
    static std::set<LogCallback*> registered;
    return registered;
}

}  // namespace

SIM_API CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callbackFunc, void* userData,
                                                CUlogsCallbackHandle* callback_out) {
    if (callbackFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto* entry = new LogCallback{callbackFunc, userData};
    {
        std::lock_guard lock(g_mutex);
        callbacks().insert(entry);
    }
    if (callback_out != nullptr) *callback_out = reinterpret_cast<CUlogsCallbackHandle>(entry);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle callback) {
    auto* entry = reinterpret_cast<LogCallback*>(callback);
    std::lock_guard lock(g_mutex);
    if (callbacks().erase(entry) == 0) return CUDA_ERROR_INVALID_VALUE;
    delete entry;
    return CUDA_SUCCESS;
}
