// Shared pieces of the driver hooks: the depth guard, export macros, the current device.
#pragma once

#include <cuda.h>

#include "hook_registry.h"
#include "tbdprof/collector/capture_gate.h"
#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/cupti_consumer.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/session.h"

#define TBD_VISIBLE __attribute__((visibility("default")))

// Defines `real_<symbol>` and the exported `symbol`, which runs HOOK on the Driver path. Use it in
// namespace tbdprof::preload (not an unnamed namespace: the export needs external linkage).
#define TBD_DRIVER_HOOK(symbol, type, HOOK, PARAMS, ARGS)                                                    \
    static constinit ::tbdprof::preload::RealFunction<type> real_##symbol{#symbol};                                 \
    extern "C" TBD_VISIBLE CUresult export_##symbol PARAMS __asm__(#symbol);                                   \
    extern "C" CUresult export_##symbol PARAMS { return HOOK<real_##symbol, ::tbdprof::raw::ApiPath::Driver> ARGS; }

// The registry entry of a symbol defined with TBD_DRIVER_HOOK.
#define TBD_HOOK_ENTRY(symbol, HOOK)                                                                          \
    ::tbdprof::preload::HookedSymbol {                                                                        \
        #symbol, [] { return reinterpret_cast<void*>(real_##symbol.get()); },                                   \
        {                                                                                                     \
            nullptr, reinterpret_cast<void*>(&HOOK<real_##symbol, ::tbdprof::raw::ApiPath::Runtime>),          \
                reinterpret_cast<void*>(&export_##symbol),                                                    \
                reinterpret_cast<void*>(&HOOK<real_##symbol, ::tbdprof::raw::ApiPath::DriverViaProcAddress>), \
                nullptr                                                                                       \
        }                                                                                                     \
    }

namespace tbdprof::preload {

using collector::ThreadState;

// Counts nesting on this thread: only the outermost recorded driver call is recorded, so a wrapped
// entry point that reaches another one inside the driver is counted once.
class HookGuard {
public:
    HookGuard() {
        if (!collector::collector_enabled()) return;
        state_ = &collector::thread_state();
        outermost_ = state_->hook_depth++ == 0;
        if (outermost_) collector::ensure_session();
    }
    ~HookGuard() {
        if (outermost_) [[likely]] {  // implies state_
            --state_->hook_depth;
            // CUPTI holds too much buffer memory: wait for the device to catch up (back_pressure.h).
            if (collector::back_pressure::cupti_pressure()) [[unlikely]]
                collector::back_pressure::hold_for_cupti();
        } else if (state_ != nullptr) {
            --state_->hook_depth;
        }
    }
    HookGuard(const HookGuard&) = delete;
    HookGuard& operator=(const HookGuard&) = delete;

    bool recording() const { return outermost_; }
    ThreadState& state() { return *state_; }

private:
    ThreadState* state_ = nullptr;
    bool outermost_ = false;
};

// The API path to record: inside a library call (cuBLAS) everything is the library's.
inline ApiPath effective_path(const ThreadState& thread, ApiPath path) {
    return thread.library_depth > 0 ? ApiPath::Library : path;
}

// The calling thread's current device, cached until the context changes; announces each device once.
int current_device_slow(ThreadState& thread);
inline int current_device(ThreadState& thread) {
    return thread.device >= 0 ? thread.device : current_device_slow(thread);
}

// Around work CUPTI reports: our sequence number becomes its external correlation id.
class CorrelationScope {
public:
    explicit CorrelationScope(uint64_t sequence) : active_(collector::cupti::active()) {
        if (active_) collector::cupti::push_correlation(sequence);
    }
    ~CorrelationScope() {
        if (active_) collector::cupti::pop_correlation();
    }
    CorrelationScope(const CorrelationScope&) = delete;
    CorrelationScope& operator=(const CorrelationScope&) = delete;

private:
    bool active_;
};

}  // namespace tbdprof::preload
