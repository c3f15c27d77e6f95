// Host functions in stream order (cuLaunchHostFunc, which cudaLaunchHostFunc and
// cudaStreamAddCallback use). One driver thread runs them, in enqueue order, once the device
// timeline reaches them, as the real driver's callback thread does. Synchronizing with the stream or
// context waits for them to return; later work on the stream is not held back by how long a callback
// runs (the timeline cannot know that in advance).
#include "driver_api.h"
#include "graph_state.h"

#include <condition_variable>
#include <deque>
#include <thread>

using namespace tbdsim::driver;

namespace {

bool is_legacy(const Stream* s) {
    for (const auto& c : state().contexts)
        if (&c->legacy_stream == s) return true;
    return false;
}

struct HostCall {
    uint64_t due_ns;
    CUhostFn fn;
    void* user;
    Stream* stream;
};

class HostFunctionRunner {
public:
    void enqueue(const HostCall& call) {
        std::lock_guard lock(mutex_);
        if (!started_) {
            std::thread([this] { run(); }).detach();  // lives as long as the process
            started_ = true;
        }
        queue_.push_back(call);
        wake_.notify_one();
    }

private:
    void run() {
        for (;;) {
            HostCall call;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [this] { return !queue_.empty(); });
                call = queue_.front();
                queue_.pop_front();
            }
            wait_until_ns(call.due_ns);
            call.fn(call.user);
            std::lock_guard lock(state().mutex);
            if (state().live_streams.count(call.stream) || is_legacy(call.stream)) {
                --call.stream->pending_host_calls;
                --call.stream->context->pending_host_calls;
            }
            state().host_calls_done.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<HostCall> queue_;
    bool started_ = false;
};

HostFunctionRunner& runner() {
    static auto* instance = new HostFunctionRunner;  // never destroyed: its thread outlives main
    return *instance;
}

CUresult launch_host_func(CUstream handle, CUhostFn fn, void* user, bool per_thread) {
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        Stream* stream = resolve_stream(handle, per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        // Captured host functions (host nodes in a captured graph) are not modelled.
        if (CUresult rc = check_not_capturing(*stream); rc != CUDA_SUCCESS) return rc;
        enqueue_host_function(*stream, fn, user);
    }
    return CUDA_SUCCESS;
}

}  // namespace

void tbdsim::driver::enqueue_host_function(Stream& stream, CUhostFn fn, void* user) {
    ++stream.pending_host_calls;
    ++stream.context->pending_host_calls;
    runner().enqueue({place_work(stream, 0).second, fn, user, &stream});
}

extern "C" CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void*);

SIM_API CUresult CUDAAPI cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user) {
    return launch_host_func(stream, fn, user, false);
}

SIM_API CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream stream, CUhostFn fn, void* user) {
    return launch_host_func(stream, fn, user, true);
}
