// CUDA graphs: stream capture begin/end (the count the launch, copy and set hooks check), graph
// instantiation (and cuGraphExecUpdate, which gives an executable another graph's nodes) and graph
// launches. A graph launch pushes its sequence number as CUPTI external correlation id around the call, so every kernel the replay runs is tied to its RawGraphLaunch rather
// than to the launching thread (whose ordinary launches pair with their kernels in order).
#include <string_view>

#include "graph_capture.h"
#include "hook_support.h"

namespace tbdprof::preload {

std::atomic<int32_t> g_capturing_streams{0};

namespace {

using IsCapturingFn = decltype(&cuStreamIsCapturing);
constinit RealFunction<IsCapturingFn> real_is_capturing{"cuStreamIsCapturing"};
constinit RealFunction<IsCapturingFn> real_is_capturing_ptsz{"cuStreamIsCapturing_ptsz"};

bool is_per_thread_entry(const char* name) {
    const std::string_view entry(name);
    return entry.ends_with("_ptsz") || entry.ends_with("_ptds");
}

void record_capture(raw::CapturePhase phase, CUstream stream, CUgraph graph, unsigned mode, bool per_thread) {
    HookGuard guard;
    if (!guard.recording()) return;
    ThreadState& thread = guard.state();
    raw::RawGraphCapture record{};
    record.host_ns = collector::host_monotonic_ns();
    record.sequence = collector::next_sequence();
    record.stream = reinterpret_cast<uint64_t>(stream);
    record.graph = reinterpret_cast<uint64_t>(graph);
    record.device = current_device(thread);
    record.phase = phase;
    record.mode = static_cast<uint8_t>(mode);
    record.per_thread = per_thread ? 1 : 0;
    collector::emit_record(thread, raw::RecordKind::GraphCapture, record);
}

template <auto& Real, ApiPath>
CUresult begin_capture(CUstream stream, CUstreamCaptureMode mode) {
    const CUresult result = Real.get()(stream, mode);
    if (result != CUDA_SUCCESS) return result;
    g_capturing_streams.fetch_add(1, std::memory_order_relaxed);
    // The Begin record's sequence comes after the call: captured work always has a later one.
    record_capture(raw::CapturePhase::Begin, stream, nullptr, mode, is_per_thread_entry(Real.name));
    return result;
}

template <auto& Real, ApiPath>
CUresult end_capture(CUstream stream, CUgraph* graph) {
    const CUresult result = Real.get()(stream, graph);
    // An invalidated capture ends too (with no graph); other errors leave it going.
    if (result != CUDA_SUCCESS && result != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) return result;
    g_capturing_streams.fetch_sub(1, std::memory_order_relaxed);
    record_capture(raw::CapturePhase::End, stream, result == CUDA_SUCCESS && graph ? *graph : nullptr, 0,
                   is_per_thread_entry(Real.name));
    return result;
}

void record_instantiation(CUgraph graph, CUgraphExec exec) {
    HookGuard guard;
    if (!guard.recording()) return;
    raw::RawGraphInstantiate record{};
    record.host_ns = collector::host_monotonic_ns();
    record.graph = reinterpret_cast<uint64_t>(graph);
    record.graph_exec = reinterpret_cast<uint64_t>(exec);
    collector::emit_record(guard.state(), raw::RecordKind::GraphInstantiate, record);
}

template <auto& Real, ApiPath>
CUresult graph_instantiate(CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
    const CUresult result = Real.get()(exec, graph, flags);
    if (result == CUDA_SUCCESS && exec != nullptr) record_instantiation(graph, *exec);
    return result;
}

// After a successful cuGraphExecUpdate the executable runs `graph`'s nodes: for the builder that is
// an instantiation from `graph` at this time (its later replays take that graph's captured launches
// as their template).
template <auto& Real, ApiPath>
CUresult graph_exec_update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info) {
    const CUresult result = Real.get()(exec, graph, info);
    if (result == CUDA_SUCCESS) record_instantiation(graph, exec);
    return result;
}

template <auto& Real, ApiPath Path>
CUresult graph_launch(CUgraphExec exec, CUstream stream) {
    if (!collector::capture::admits(collector::capture::Event::Other)) return Real.get()(exec, stream);
    HookGuard guard;
    if (!guard.recording()) return Real.get()(exec, stream);
    ThreadState& thread = guard.state();
    raw::RawGraphLaunch record{};
    record.sequence = collector::next_sequence();
    record.host_ns = collector::host_monotonic_ns();
    record.device = current_device(thread);
    record.api = effective_path(thread, Path);
    CUresult result;
    {
        CorrelationScope correlation(record.sequence);
        result = Real.get()(exec, stream);
    }
    if (result != CUDA_SUCCESS) return result;
    record.stream = reinterpret_cast<uint64_t>(stream);
    record.graph_exec = reinterpret_cast<uint64_t>(exec);
    collector::emit_record(thread, raw::RecordKind::GraphLaunch, record);
    return result;
}

using BeginCaptureFn = decltype(&cuStreamBeginCapture_v2);
using EndCaptureFn = decltype(&cuStreamEndCapture);
using InstantiateFn = decltype(&cuGraphInstantiateWithFlags);
using ExecUpdateFn = decltype(&cuGraphExecUpdate);
using GraphLaunchFn = decltype(&cuGraphLaunch);

}  // namespace

bool stream_is_capturing(uint64_t stream, const char* entry_name) {
    IsCapturingFn is_capturing =
        is_per_thread_entry(entry_name) ? real_is_capturing_ptsz.get() : real_is_capturing.get();
    if (is_capturing == nullptr) return false;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    // An error (the legacy stream while a blocking stream captures) means the work could not have been
    // captured: it either failed or ran.
    return is_capturing(reinterpret_cast<CUstream>(stream), &status) == CUDA_SUCCESS &&
           status != CU_STREAM_CAPTURE_STATUS_NONE;
}

TBD_DRIVER_HOOK(cuStreamBeginCapture_v2, BeginCaptureFn, begin_capture, (CUstream s, CUstreamCaptureMode m), (s, m))
TBD_DRIVER_HOOK(cuStreamBeginCapture_v2_ptsz, BeginCaptureFn, begin_capture, (CUstream s, CUstreamCaptureMode m),
                (s, m))
TBD_DRIVER_HOOK(cuStreamEndCapture, EndCaptureFn, end_capture, (CUstream s, CUgraph* g), (s, g))
TBD_DRIVER_HOOK(cuStreamEndCapture_ptsz, EndCaptureFn, end_capture, (CUstream s, CUgraph* g), (s, g))
TBD_DRIVER_HOOK(cuGraphInstantiateWithFlags, InstantiateFn, graph_instantiate,
                (CUgraphExec * e, CUgraph g, unsigned long long f), (e, g, f))
// cuda.h names the CUDA 12 form cuGraphExecUpdate_v2 (the CUDA 11 form is not hooked).
TBD_DRIVER_HOOK(cuGraphExecUpdate_v2, ExecUpdateFn, graph_exec_update,
                (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo* i), (e, g, i))
TBD_DRIVER_HOOK(cuGraphLaunch, GraphLaunchFn, graph_launch, (CUgraphExec e, CUstream s), (e, s))
TBD_DRIVER_HOOK(cuGraphLaunch_ptsz, GraphLaunchFn, graph_launch, (CUgraphExec e, CUstream s), (e, s))

void add_graph_hooks(std::vector<HookedSymbol>& out) {
    out.push_back(TBD_HOOK_ENTRY(cuStreamBeginCapture_v2, begin_capture));
    out.push_back(TBD_HOOK_ENTRY(cuStreamBeginCapture_v2_ptsz, begin_capture));
    out.push_back(TBD_HOOK_ENTRY(cuStreamEndCapture, end_capture));
    out.push_back(TBD_HOOK_ENTRY(cuStreamEndCapture_ptsz, end_capture));
    out.push_back(TBD_HOOK_ENTRY(cuGraphInstantiateWithFlags, graph_instantiate));
    out.push_back(TBD_HOOK_ENTRY(cuGraphExecUpdate_v2, graph_exec_update));
    out.push_back(TBD_HOOK_ENTRY(cuGraphLaunch, graph_launch));
    out.push_back(TBD_HOOK_ENTRY(cuGraphLaunch_ptsz, graph_launch));
}

}  // namespace tbdprof::preload
