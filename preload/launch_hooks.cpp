// Kernel launches: geometry, stream, the mangled name, and the argument scan — every 8-byte-aligned
// word of the arguments whose value lies in the range of addresses allocated so far becomes a
// RawPointerCandidate (the trace builder decides which allocation, if any, it points into).
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "graph_capture.h"
#include "hook_support.h"
#include "kernel_catalog.h"
#include "tbdprof/collector/kernel_counters.h"

namespace tbdprof::preload {
namespace {

using collector::ThreadState;

constexpr size_t kMaxCandidates = 256;

struct Geometry {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_mem;
    CUstream stream;
};

// Where the scan puts candidates: straight into the launch record reserved in the thread's ring.
struct CandidateSink {
    uint8_t* out;     // RawPointerCandidate array (8-byte aligned, written with memcpy)
    size_t capacity;  // at most kMaxCandidates
    size_t count = 0;

    void add(uint64_t value, size_t param, size_t offset, bool read_only) {
        if (count >= capacity) return;
        raw::RawPointerCandidate c{};
        c.value = value;
        c.param_index = static_cast<uint16_t>(param);
        c.param_offset = static_cast<uint16_t>(offset);
        c.read_only = read_only ? 1 : 0;
        std::memcpy(out + count++ * sizeof c, &c, sizeof c);
    }
};

// Words of parameter `index` (`bytes` of it at `data`, at `param_offset` in the parameter buffer).
void scan_parameter(CandidateSink& out, const KernelInfo& info, size_t index, const uint8_t* data, size_t param_offset,
                    size_t bytes, uint64_t low, uint64_t high) {
    const size_t first = (8 - param_offset % 8) % 8;  // aligned in the parameter buffer
    const bool const_pointer = index < 64 && (info.const_mask >> index & 1) != 0;
    for (size_t offset = first; offset + 8 <= bytes; offset += 8) {
        uint64_t word;
        std::memcpy(&word, data + offset, sizeof word);
        if (word >= low && word <= high) out.add(word, index, offset, const_pointer && offset == 0);
    }
}

// The common case: the kernel's precomputed word list, so a launch only loads, stores and compares.
// (No null check: the driver read every parameter through these pointers before we get here.)
inline size_t scan_listed_words(uint8_t* out, const KernelInfo& info, void** params, uint64_t low, uint64_t high) {
    static_assert(sizeof(raw::RawPointerCandidate) == 16 && offsetof(raw::RawPointerCandidate, param_index) == 8);
    const uint64_t span = high - low;
    uint8_t* slot = out;  // room for scan_word_count candidates (reserved for it)
    const ScanWord* word = info.scan_words;
    const ScanWord* const end = word + info.scan_word_count;
    for (; word != end; ++word) {
        uint64_t value;
        std::memcpy(&value, static_cast<const uint8_t*>(params[word->param]) + word->offset, sizeof value);
        // Written unconditionally, kept only when the word is in range: no branch per word.
        std::memcpy(slot, &value, sizeof value);
        std::memcpy(slot + 8, &word->candidate_tail, sizeof word->candidate_tail);
        uint8_t* const next = slot + sizeof(raw::RawPointerCandidate);
        slot = value - low <= span ? next : slot;  // a conditional move
    }
    return static_cast<size_t>(slot - out) / sizeof(raw::RawPointerCandidate);
}

// Candidate slots a launch of this kernel may need.
size_t candidate_capacity(const KernelInfo& info, void** params, void** extra) {
    if (params != nullptr) {
        if (!info.layout_known) return 0;
        return info.scan_words_complete ? info.scan_word_count : kMaxCandidates;
    }
    return extra != nullptr ? kMaxCandidates : 0;
}

[[gnu::noinline]] void scan_arguments(CandidateSink& out, const KernelInfo& info, void** params, void** extra) {
    const uint64_t low = collector::globals().live_low.load(std::memory_order_relaxed);
    const uint64_t high = collector::globals().live_high.load(std::memory_order_relaxed);
    if (low > high || out.capacity == 0) return;  // nothing allocated yet, or nothing to scan
    if (params != nullptr) {
        if (!info.layout_known) return;
        if (info.scan_words_complete) {
            out.count = scan_listed_words(out.out, info, params, low, high);
            return;
        }
        for (size_t i = 0; i < info.param_count; ++i) {
            if (params[i] == nullptr) continue;
            scan_parameter(out, info, i, static_cast<const uint8_t*>(params[i]), info.offsets[i], info.sizes[i], low,
                           high);
        }
        return;
    }
    if (extra == nullptr) return;
    // {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}
    const uint8_t* buffer = nullptr;
    size_t size = 0;
    for (int i = 0; i < 16 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = static_cast<const uint8_t*>(extra[i + 1]);
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != nullptr)
            size = *static_cast<const size_t*>(extra[i + 1]);
    }
    if (buffer == nullptr) return;
    for (size_t offset = 0; offset + 8 <= size; offset += 8) {
        uint64_t word;
        std::memcpy(&word, buffer + offset, sizeof word);
        if (word < low || word > high) continue;
        size_t param = 0xffff, param_offset = offset;
        for (size_t i = 0; i < info.param_count; ++i) {
            if (offset >= info.offsets[i] && offset < size_t{info.offsets[i]} + info.sizes[i]) {
                param = i;
                param_offset = offset - info.offsets[i];
                break;
            }
        }
        const bool const_pointer = param < 64 && param_offset == 0 && (info.const_mask >> param & 1) != 0;
        out.add(word, param, param_offset, const_pointer);
    }
}

// Outside a capture window a launch is only the real call: the wrappers below ask the gate first,
// before building anything (one relaxed load and a branch; see capture_gate.h).
inline bool admitted(CUfunction f) {
    return collector::capture::admits(collector::capture::Event::Launch, f);
}

// Records one launch around the real call `launch()`; geometry and arguments as the caller gave them.
// The record is written straight into the thread's ring: room for it and every possible candidate is
// reserved before the launch and the fields known then are written at once (nothing has to be kept
// across the call); after the launch succeeded the scan fills the candidates in and only the used
// part is committed (a failed launch commits nothing). Nothing else writes to this thread's ring in
// between: calls the driver makes into our hooks are nested (not recorded), CUPTI hands buffers back
// on its own thread or in a flush, and the scan calls nothing.
// `entry`: the real entry point's name (its _ptsz suffix says what stream 0 means).
template <typename Launch>
CUresult record_launch(ApiPath path, const char* entry, CUfunction function, const Geometry& g, void** params,
                       void** extra, Launch&& launch) {
    HookGuard guard;
    if (!guard.recording()) return launch();
    ThreadState& thread = guard.state();
    // Everything that may emit records of its own (a new name, a device, CUPTI's thread tag, the
    // --metrics profiler) happens before the reserve.
    const KernelInfo& info = kernel_info(thread, function);
    const int device = current_device(thread);
    collector::cupti::ensure_thread_tagged(thread);  // CUPTI ties the kernel to this thread, see there
    // --metrics only: one kernel at a time, profiled (kernel_counters.h); its records are written
    // after this launch's record is committed.
    const bool counting = collector::counters::g_requested.load(std::memory_order_relaxed);
    if (counting) [[unlikely]]
        collector::counters::before_launch_slow(thread);
    const bool listed = params != nullptr && info.scan_words_complete;  // the common case
    const size_t bytes = listed ? info.listed_record_bytes
                                : sizeof(raw::RawLaunch) +
                                      candidate_capacity(info, params, extra) * sizeof(raw::RawPointerCandidate);
    uint8_t* p = collector::reserve_record_space(thread, bytes);
    if (p == nullptr) [[unlikely]] {  // counted as a drop
        const CUresult result = launch();
        if (counting) [[unlikely]]
            collector::counters::after_launch_slow(thread, result == CUDA_SUCCESS);
        return result;
    }
    auto* record = new (p) raw::RawLaunch;  // every field is written below
    record->host_ns = collector::host_monotonic_ns();
    record->sequence = collector::next_sequence();
    record->name_string = info.name_string;
    record->stream = reinterpret_cast<uint64_t>(g.stream);
    // Field by field: the geometry then goes from the arguments to the ring without a copy on the stack.
    record->grid[0] = g.grid[0];
    record->grid[1] = g.grid[1];
    record->grid[2] = g.grid[2];
    record->block[0] = g.block[0];
    record->block[1] = g.block[1];
    record->block[2] = g.block[2];
    record->shared_mem_bytes = g.shared_mem;
    record->device = device;
    record->api = thread.library_depth > 0 ? ApiPath::Library : path;

    const CUresult result = launch();
    if (result != CUDA_SUCCESS) [[unlikely]] {
        if (counting) [[unlikely]]
            collector::counters::after_launch_slow(thread, false);
        return result;
    }
    // (What is needed after the call is read again rather than kept across it: fewer registers saved.)
    if (thread.library_depth > 0) {  // a launch does not change it
        if (thread.library_first_sequence == 0) thread.library_first_sequence = record->sequence;
        thread.library_last_sequence = record->sequence;
    }
    // While anything captures, the launch may have become a graph node instead of running.
    uint8_t captured = 0;
    if (capture_may_be_active()) [[unlikely]]
        captured = stream_is_capturing(reinterpret_cast<uint64_t>(g.stream), entry) ? 1 : 0;
    size_t candidate_count = 0;
    if (params != nullptr && info.scan_words_complete) [[likely]] {
        const uint64_t low = collector::globals().live_low.load(std::memory_order_relaxed);
        const uint64_t high = collector::globals().live_high.load(std::memory_order_relaxed);
        if (low <= high) candidate_count = scan_listed_words(p + sizeof(raw::RawLaunch), info, params, low, high);
    } else {
        CandidateSink candidates{p + sizeof(raw::RawLaunch), candidate_capacity(info, params, extra)};
        scan_arguments(candidates, info, params, extra);
        candidate_count = candidates.count;
    }
    const auto size = static_cast<uint16_t>(sizeof(raw::RawLaunch) + candidate_count * sizeof(raw::RawPointerCandidate));
    record->header = {raw::RecordKind::Launch, size, thread.tid};
    record->candidate_count = static_cast<uint16_t>(candidate_count);
    record->captured = captured;
    std::memset(record->reserved, 0, sizeof record->reserved);
    collector::commit_record(thread, size);
    if (counting) [[unlikely]]
        collector::counters::after_launch_slow(thread, true);
    return result;
}

// The recording part of launch_kernel, out of line: the gated-out path of launch_kernel then needs
// no stack frame and forwards its arguments with a tail call.
template <auto& Real, ApiPath Path>
[[gnu::noinline]] CUresult launch_kernel_recorded(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                  unsigned by, unsigned bz, unsigned shared_mem, CUstream stream,
                                                  void** params, void** extra) {
    const Geometry g{{gx, gy, gz}, {bx, by, bz}, shared_mem, stream};
    return record_launch(Path, Real.name, f, g, params, extra, [&] {
        return Real.get()(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
    });
}

// Capture control is on and the gate is not simply open: ask it (closed: only the real call).
template <auto& Real, ApiPath Path>
[[gnu::noinline]] CUresult launch_kernel_gated(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                               unsigned by, unsigned bz, unsigned shared_mem, CUstream stream,
                                               void** params, void** extra) {
    if (!admitted(f)) return Real.get()(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
    return launch_kernel_recorded<Real, Path>(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
}

// Both ways out are calls with this very signature, so they compile to jumps (before, the gate's
// slow path inline made the common path save and reload every register and argument).
template <auto& Real, ApiPath Path>
CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared_mem, CUstream stream, void** params, void** extra) {
    const int gate = collector::capture::g_gate.load(std::memory_order_relaxed);
    if (gate == collector::capture::kOpen) [[likely]]
        return launch_kernel_recorded<Real, Path>(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
    if (gate == collector::capture::kClosed) return Real.get()(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
    return launch_kernel_gated<Real, Path>(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra);
}

template <auto& Real, ApiPath Path>
CUresult launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
    if (config == nullptr || !admitted(f)) return Real.get()(config, f, params, extra);
    const Geometry g{{config->gridDimX, config->gridDimY, config->gridDimZ},
                     {config->blockDimX, config->blockDimY, config->blockDimZ},
                     config->sharedMemBytes,
                     config->hStream};
    return record_launch(Path, Real.name, f, g, params, extra, [&] { return Real.get()(config, f, params, extra); });
}

template <auto& Real, ApiPath Path>
CUresult launch_cooperative(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared_mem, CUstream stream, void** params) {
    if (!admitted(f)) [[unlikely]] return Real.get()(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params);
    const Geometry g{{gx, gy, gz}, {bx, by, bz}, shared_mem, stream};
    return record_launch(Path, Real.name, f, g, params, nullptr, [&] {
        return Real.get()(f, gx, gy, gz, bx, by, bz, shared_mem, stream, params);
    });
}

using LaunchFn = decltype(&cuLaunchKernel);
using LaunchExFn = decltype(&cuLaunchKernelEx);
using CooperativeFn = decltype(&cuLaunchCooperativeKernel);

}  // namespace

#define TBD_LAUNCH_PARAMS                                                                                     \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sm, \
     CUstream s, void** p, void** e)
#define TBD_LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, sm, s, p, e)
TBD_DRIVER_HOOK(cuLaunchKernel, LaunchFn, launch_kernel, TBD_LAUNCH_PARAMS, TBD_LAUNCH_ARGS)
TBD_DRIVER_HOOK(cuLaunchKernel_ptsz, LaunchFn, launch_kernel, TBD_LAUNCH_PARAMS, TBD_LAUNCH_ARGS)
TBD_DRIVER_HOOK(cuLaunchKernelEx, LaunchExFn, launch_kernel_ex,
                (const CUlaunchConfig* c, CUfunction f, void** p, void** e), (c, f, p, e))
TBD_DRIVER_HOOK(cuLaunchKernelEx_ptsz, LaunchExFn, launch_kernel_ex,
                (const CUlaunchConfig* c, CUfunction f, void** p, void** e), (c, f, p, e))
TBD_DRIVER_HOOK(cuLaunchCooperativeKernel, CooperativeFn, launch_cooperative,
                (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned sm, CUstream s, void** p),
                (f, gx, gy, gz, bx, by, bz, sm, s, p))
TBD_DRIVER_HOOK(cuLaunchCooperativeKernel_ptsz, CooperativeFn, launch_cooperative,
                (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                 unsigned sm, CUstream s, void** p),
                (f, gx, gy, gz, bx, by, bz, sm, s, p))

// Without capture control (TBDPROF_CAPTURE unset: the gate is open for the whole process, see
// capture_gate.cpp) the pointers handed out through cuGetProcAddress and dlsym, the way the runtime
// and libraries launch, go straight to the recording function: no gate to ask, and no wrapper that
// forwards 11 arguments. Read from the environment, not from the gate's configuration: this table
// may be built before our constructor ran.
template <auto& Real>
HookedSymbol ungated_launch_entry(HookedSymbol entry) {
    if (const char* capture = std::getenv("TBDPROF_CAPTURE"); capture != nullptr && *capture != '\0') return entry;
    entry.wrappers[static_cast<int>(ApiPath::Runtime)] =
        reinterpret_cast<void*>(&launch_kernel_recorded<Real, ApiPath::Runtime>);
    entry.wrappers[static_cast<int>(ApiPath::DriverViaProcAddress)] =
        reinterpret_cast<void*>(&launch_kernel_recorded<Real, ApiPath::DriverViaProcAddress>);
    return entry;
}

void add_launch_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(ungated_launch_entry<real_cuLaunchKernel>(TBD_HOOK_ENTRY(cuLaunchKernel, launch_kernel)));
    out.push_back(ungated_launch_entry<real_cuLaunchKernel_ptsz>(TBD_HOOK_ENTRY(cuLaunchKernel_ptsz, launch_kernel)));
    out.push_back(TBD_HOOK_ENTRY(cuLaunchKernelEx, launch_kernel_ex));
    out.push_back(TBD_HOOK_ENTRY(cuLaunchKernelEx_ptsz, launch_kernel_ex));
    out.push_back(TBD_HOOK_ENTRY(cuLaunchCooperativeKernel, launch_cooperative));
    out.push_back(TBD_HOOK_ENTRY(cuLaunchCooperativeKernel_ptsz, launch_cooperative));
}

}  // namespace tbdprof::preload
