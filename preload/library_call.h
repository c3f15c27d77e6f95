// What the cuBLAS and cuBLASLt hooks share: finding a library's real entry points, handing out our
// wrappers to dlsym callers, and recording one call as a RawLibraryCall whose sequence range covers
// the launches made inside it (on this thread, ApiPath::Library).
#pragma once

#include <cublas_api.h>
#include <dlfcn.h>

#include <atomic>
#include <type_traits>

#include "hook_support.h"
#include "loaded_symbol.h"

namespace tbdprof::preload {

// A library entry point: from dlsym(RTLD_NEXT) on first use (programs linked against the library),
// else from the loaded library that defines it (one loaded in a dlopen'd module's local scope), or
// remembered from a dlsym we intercepted (programs that dlopen it).
template <typename F>
struct LibraryFunction {
    const char* name;
    std::atomic<F> fn{nullptr};
    F get() {
        F f = fn.load(std::memory_order_acquire);
        if (f == nullptr) {
            f = reinterpret_cast<F>(real_dlsym(RTLD_NEXT, name));
            // A library loaded inside a dlopen'd module's local scope (PyTorch's) is not in RTLD_NEXT's.
            if (f == nullptr) f = reinterpret_cast<F>(find_in_loaded_libraries(name));
            if (f != nullptr) fn.store(f, std::memory_order_release);
        }
        return f;
    }
    // Keeps the first real address seen (a dlsym result), never one of ours.
    void remember(void* result) {
        F expected = nullptr;
        fn.compare_exchange_strong(expected, reinterpret_cast<F>(result));
    }
};

// A dlsym result for an entry point we wrap: remember the library's function, hand out ours.
template <typename F>
void* substitute_library_function(LibraryFunction<F>& real, std::type_identity_t<F> ours, void* result) {
    if (result == reinterpret_cast<void*>(ours)) return result;
    real.remember(result);
    return reinterpret_cast<void*>(ours);
}

// Runs `call` as a recorded library call. Only a successful call is written, after `describe(thread,
// record)` has filled in what it did (the hook reads its arguments only then, off the timed span).
// Nested library calls (one entry point using another, cuBLAS using cuBLASLt) belong to the outer one.
// The status type is the library's (cublasStatus_t, cudnnStatus_t): success is 0 in every one.
template <typename Call, typename Describe>
auto record_library_call(Call&& call, Describe&& describe) -> decltype(call()) {
    if (!collector::collector_enabled()) return call();
    if (!collector::capture::admits(collector::capture::Event::Other)) return call();
    ThreadState& thread = collector::thread_state();
    if (thread.library_depth > 0) return call();
    collector::ensure_session();
    ++thread.library_depth;
    thread.library_first_sequence = 0;
    thread.library_last_sequence = 0;
    raw::RawLibraryCall record{};
    record.begin_host_ns = collector::host_monotonic_ns();
    const auto status = call();
    record.end_host_ns = collector::host_monotonic_ns();
    --thread.library_depth;
    if (status != decltype(status){}) return status;
    describe(thread, record);
    record.first_sequence = thread.library_first_sequence;
    record.last_sequence = thread.library_last_sequence;
    collector::emit_record(thread, raw::RecordKind::LibraryCall, record);
    return status;
}

// One more operand of the call being described (inside `describe`): written before the call's own
// record, joined to it by thread and begin_ns. A null pointer is skipped (an optional operand left out).
inline void record_operand(ThreadState& thread, const raw::RawLibraryCall& call, raw::LibraryOperandRole role,
                           const void* address, uint64_t bytes, raw::OperandAccess access) {
    if (address == nullptr) return;
    raw::RawLibraryOperand operand{};
    operand.call_begin_host_ns = call.begin_host_ns;
    operand.address = reinterpret_cast<uint64_t>(address);
    operand.bytes = bytes;
    operand.role = role;
    operand.access = access;
    collector::emit_record(thread, raw::RecordKind::LibraryOperand, operand);
}

}  // namespace tbdprof::preload
