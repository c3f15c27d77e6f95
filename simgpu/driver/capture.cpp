// Stream capture: beginning and ending capture sequences, querying them, and the rules that decide
// whether a call made while something captures is recorded, runs, or fails (cuda.h's documentation
// of cuStreamBeginCapture, cuStreamIsCapturing and cuThreadExchangeStreamCaptureMode).
#include "driver_api.h"
#include "graph_state.h"

using namespace tbdsim::driver;

namespace {

// The calling thread's capture interaction mode; CUDA's default is global.
thread_local CUstreamCaptureMode t_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

bool is_blocking(const Stream& s) {
    return !s.legacy && !(s.flags & CU_STREAM_NON_BLOCKING);
}

// Captures of blocking streams in `context`: the legacy stream would implicitly depend on them.
template <class F>
void for_blocking_captures(const Context& context, F&& f) {
    for (Capture* c : state().captures)
        if (c->origin->context == &context && is_blocking(*c->origin)) f(*c);
}

CUresult legacy_use_during_capture(const Stream& legacy) {
    bool any = false;
    for_blocking_captures(*legacy.context, [&](Capture& c) {
        c.invalidated = true;
        any = true;
    });
    return any ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

bool valid_mode(CUstreamCaptureMode mode) {
    return mode == CU_STREAM_CAPTURE_MODE_GLOBAL || mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ||
           mode == CU_STREAM_CAPTURE_MODE_RELAXED;
}

CUresult begin_capture(CUstream handle, CUstreamCaptureMode mode, bool per_thread) {
    if (!valid_mode(mode)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Stream* stream = resolve_stream(handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    // The legacy stream cannot capture (it synchronizes with every blocking stream).
    if (stream->legacy) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (stream->capture) return CUDA_ERROR_ILLEGAL_STATE;
    auto* graph = new Graph;
    graph->id = state().next_graph_id++;
    graph->context = stream->context;
    state().live_graphs.insert(graph);
    auto* capture = new Capture;
    capture->id = state().next_capture_id++;
    capture->graph = graph;
    capture->origin = stream;
    capture->mode = mode;
    capture->thread = std::this_thread::get_id();
    stream->capture = capture;
    state().captures.insert(capture);
    return CUDA_SUCCESS;
}

CUresult end_capture(CUstream handle, CUgraph* out, bool per_thread) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Stream* stream = resolve_stream(handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    Capture* capture = stream->capture;
    if (!capture) return CUDA_ERROR_ILLEGAL_STATE;
    if (capture->mode != CU_STREAM_CAPTURE_MODE_RELAXED && capture->thread != std::this_thread::get_id())
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    stream->capture = nullptr;
    state().captures.erase(capture);
    Graph* graph = capture->graph;
    const bool invalidated = capture->invalidated;
    delete capture;
    if (invalidated) {  // the sequence ends, but there is no graph to show for it
        state().live_graphs.erase(graph);
        delete graph;
        *out = nullptr;
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *out = reinterpret_cast<CUgraph>(graph);
    return CUDA_SUCCESS;
}

// The status of `handle`, or an error (the legacy stream while a blocking stream captures).
CUresult capture_status(CUstream handle, bool per_thread, CUstreamCaptureStatus& status, Capture*& capture) {
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Stream* stream = resolve_stream(handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    if (stream->legacy) {
        bool any = false;
        for_blocking_captures(*stream->context, [&](Capture&) { any = true; });
        if (any) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;  // the capture itself stays valid
    }
    capture = stream->capture;
    status = !capture               ? CU_STREAM_CAPTURE_STATUS_NONE
             : capture->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                    : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}

CUresult is_capturing(CUstream handle, CUstreamCaptureStatus* out, bool per_thread) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Capture* capture = nullptr;
    return capture_status(handle, per_thread, *out, capture);
}

CUresult capture_info(CUstream handle, CUstreamCaptureStatus* status_out, cuuint64_t* id_out, CUgraph* graph_out,
                      const CUgraphNode** dependencies_out, const CUgraphEdgeData** edges_out, size_t* count_out,
                      bool per_thread) {
    if (!status_out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Capture* capture = nullptr;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (CUresult rc = capture_status(handle, per_thread, status, capture); rc != CUDA_SUCCESS) return rc;
    *status_out = status;
    // The other outputs are only defined while a capture sequence is active.
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return CUDA_SUCCESS;
    if (id_out) *id_out = capture->id;
    if (graph_out) *graph_out = reinterpret_cast<CUgraph>(capture->graph);
    const bool has_dependency = capture->last_node != nullptr;
    if (dependencies_out) *dependencies_out = has_dependency ? &capture->last_node : nullptr;
    if (edges_out) *edges_out = nullptr;  // all edges are default ones
    if (count_out) *count_out = has_dependency ? 1 : 0;
    return CUDA_SUCCESS;
}

void invalidate_all(Context& context, CUresult& rc) {
    for (Capture* c : state().captures) {
        if (c->origin->context != &context) continue;
        c->invalidated = true;
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
}

}  // namespace

namespace tbdsim::driver {

Capture* capture_for_work_slow(Stream& stream, CUresult& rc) {
    rc = CUDA_SUCCESS;
    if (stream.legacy) {
        rc = legacy_use_during_capture(stream);
        return nullptr;
    }
    if (!stream.capture) return nullptr;
    if (stream.capture->invalidated) {
        rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        return nullptr;
    }
    return stream.capture;
}

CUresult check_not_capturing_slow(Stream& stream) {
    if (stream.legacy) return legacy_use_during_capture(stream);
    if (!stream.capture) return CUDA_SUCCESS;
    stream.capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult check_context_not_capturing(Context& context) {
    CUresult rc = CUDA_SUCCESS;
    invalidate_all(context, rc);
    return rc;
}

CUresult check_unsafe_call() {
    if (t_capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED || state().captures.empty()) return CUDA_SUCCESS;
    const std::thread::id self = std::this_thread::get_id();
    CUresult rc = CUDA_SUCCESS;
    for (Capture* c : state().captures) {
        const bool own = c->thread == self && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
        const bool other_global = c->thread != self && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                                  t_capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
        if (own || other_global) {
            c->invalidated = true;
            rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    return rc;
}

GraphNode& add_captured_node(Capture& capture, GraphNode::Kind kind) {
    auto node = std::make_unique<GraphNode>();
    node->kind = kind;
    node->id = state().next_graph_node_id++;
    // Work captured on one stream is a chain: each node depends on the one before.
    if (capture.last_node) node->dependencies.push_back(reinterpret_cast<GraphNode*>(capture.last_node));
    GraphNode& added = *node;
    capture.graph->nodes.push_back(std::move(node));
    capture.last_node = reinterpret_cast<CUgraphNode>(&added);
    return added;
}

}  // namespace tbdsim::driver

extern "C" {
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream, CUgraph*);
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream, CUstreamCaptureStatus*);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*,
                                                const CUgraphNode**, size_t*);
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*,
                                                const CUgraphNode**, const CUgraphEdgeData**, size_t*);
// The CUDA 10.0 and 10.1 forms, still exported by the real driver; cuda.h renames the plain names.
CUresult legacy_begin_capture(CUstream) __asm__("cuStreamBeginCapture");
CUresult legacy_begin_capture_ptsz(CUstream) __asm__("cuStreamBeginCapture_ptsz");
CUresult legacy_capture_info(CUstream, CUstreamCaptureStatus*, cuuint64_t*) __asm__("cuStreamGetCaptureInfo");
CUresult legacy_capture_info_ptsz(CUstream, CUstreamCaptureStatus*, cuuint64_t*) __asm__("cuStreamGetCaptureInfo_ptsz");
CUresult v2_capture_info(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**,
                         size_t*) __asm__("cuStreamGetCaptureInfo_v2");
}

SIM_API CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) {
    return begin_capture(stream, mode, false);
}
SIM_API CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream stream, CUstreamCaptureMode mode) {
    return begin_capture(stream, mode, true);
}
SIM_API CUresult legacy_begin_capture(CUstream stream) {
    return begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL, false);
}
SIM_API CUresult legacy_begin_capture_ptsz(CUstream stream) {
    return begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL, true);
}

SIM_API CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph* graph) {
    return end_capture(stream, graph, false);
}
SIM_API CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream stream, CUgraph* graph) {
    return end_capture(stream, graph, true);
}

SIM_API CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
    return is_capturing(stream, status, false);
}
SIM_API CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream stream, CUstreamCaptureStatus* status) {
    return is_capturing(stream, status, true);
}

SIM_API CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id,
                                                   CUgraph* graph, const CUgraphNode** deps,
                                                   const CUgraphEdgeData** edges, size_t* count) {
    return capture_info(s, status, id, graph, deps, edges, count, false);
}
SIM_API CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id,
                                                        CUgraph* graph, const CUgraphNode** deps,
                                                        const CUgraphEdgeData** edges, size_t* count) {
    return capture_info(s, status, id, graph, deps, edges, count, true);
}
SIM_API CUresult v2_capture_info(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                                 const CUgraphNode** deps, size_t* count) {
    return capture_info(s, status, id, graph, deps, nullptr, count, false);
}
SIM_API CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id,
                                                        CUgraph* graph, const CUgraphNode** deps, size_t* count) {
    return capture_info(s, status, id, graph, deps, nullptr, count, true);
}
SIM_API CUresult legacy_capture_info(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id) {
    return capture_info(s, status, id, nullptr, nullptr, nullptr, nullptr, false);
}
SIM_API CUresult legacy_capture_info_ptsz(CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id) {
    return capture_info(s, status, id, nullptr, nullptr, nullptr, nullptr, true);
}

SIM_API CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
    if (!mode || !valid_mode(*mode)) return CUDA_ERROR_INVALID_VALUE;
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    const CUstreamCaptureMode previous = t_capture_mode;
    t_capture_mode = *mode;
    *mode = previous;
    return CUDA_SUCCESS;
}
