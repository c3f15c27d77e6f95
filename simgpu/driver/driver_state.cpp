#include "driver_state.h"
#include "graph_state.h"

#include <pthread.h>
#include <unistd.h>

#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

namespace tbdsim::driver {

namespace {

DriverState* g_state = nullptr;

// A child forked after cuInit gets the parent's driver memory but none of its device state, as with
// NVIDIA's driver: it may not use CUDA (CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError in
// the runtime), and never waits on a lock another thread of the parent held at the fork.
void refuse_cuda_in_fork_child() {
    if (g_state == nullptr) return;
    new (&g_state->mutex) std::mutex();
    new (&g_state->host_calls_done) std::condition_variable();
    if (g_state->initialized) {
        g_state->initialized = false;
        g_state->forked_after_init = true;
    }
}

}  // namespace

DriverState& state() {
    // Never destroyed: other libraries' static destructors may still call into the driver at exit.
    static DriverState* instance = [] {
        g_state = new DriverState;
        pthread_atfork(nullptr, nullptr, refuse_cuda_in_fork_child);
        return g_state;
    }();
    return *instance;
}

namespace {
// The reserved address range of a graph allocation (graph_state.h) holding `address`, or null.
const Allocation* find_graph_reservation(uintptr_t address) {
    auto& blocks = state().graph_blocks;
    auto it = blocks.upper_bound(address);
    if (it == blocks.begin()) return nullptr;
    --it;
    const Allocation& a = it->second->reserved;
    return address < a.address + a.bytes ? &a : nullptr;
}
}  // namespace

const Allocation* find_allocation(uintptr_t address) {
    auto& allocations = state().allocations;
    auto it = allocations.upper_bound(address);
    if (it != allocations.begin()) {
        --it;
        const Allocation& a = it->second;
        size_t extent = a.bytes ? a.bytes : 1;
        if (address < a.address + extent) return &a;
    }
    return state().graph_blocks.empty() ? nullptr : find_graph_reservation(address);
}

namespace {
// A thread's context stack, behind a trivially destructible pointer: exit() destroys the main thread's
// thread-local objects before it runs static destructors and atexit handlers, and those of other
// libraries still call the driver (PyTorch's NCCL communicator manager synchronizes the device in its
// destructor), so the main thread's stack is never freed. Other threads' are, when they end.
thread_local std::vector<Context*>* t_context_stack = nullptr;
struct ContextStackCleaner {
    ~ContextStackCleaner() {
        if (gettid() == getpid()) return;
        delete t_context_stack;
        t_context_stack = nullptr;
    }
};
}  // namespace

std::vector<Context*>& context_stack() {
    if (t_context_stack == nullptr) {
        t_context_stack = new std::vector<Context*>;
        thread_local ContextStackCleaner cleaner;
        (void)cleaner;
    }
    return *t_context_stack;
}

Context* current_context() {
    auto& stack = context_stack();
    return stack.empty() ? nullptr : stack.back();
}

void set_current_context(Context* context) {
    auto& stack = context_stack();
    if (stack.empty()) {
        if (context) stack.push_back(context);
    } else if (context) {
        stack.back() = context;
    } else {
        stack.pop_back();
    }
}

Stream* resolve_stream(CUstream handle, bool per_thread_api) {
    Context* context = current_context();
    bool want_per_thread = handle == CU_STREAM_PER_THREAD || (handle == nullptr && per_thread_api);
    if (want_per_thread) {
        if (!context) return nullptr;
        // One per-thread stream per (thread, context); kept for the life of the process.
        thread_local std::map<Context*, Stream*> per_thread;
        Stream*& s = per_thread[context];
        if (!s) {
            s = new Stream;
            s->id = state().next_stream_id++;
            s->context = context;
            s->per_thread = true;
            context->streams.insert(s);
            state().live_streams.insert(s);
        }
        return s;
    }
    if (handle == nullptr || handle == CU_STREAM_LEGACY)
        return context ? &context->legacy_stream : nullptr;
    auto* stream = reinterpret_cast<Stream*>(handle);
    return state().live_streams.count(stream) ? stream : nullptr;
}

CUresult check_initialized() {
    return state().initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult require_context(Context*& out) {
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    out = current_context();
    return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

const char* persistent_kernel_name(const std::string& name) {
    // Never freed: records may be read until the process exits (and by exit handlers after that).
    static std::mutex* const mutex = new std::mutex;
    static auto* const names = new std::unordered_set<std::string>;  // nodes keep their address
    std::lock_guard lock(*mutex);
    return names->insert(name).first->c_str();
}

}  // namespace tbdsim::driver
