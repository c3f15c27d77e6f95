// CUDA graphs made by stream capture: the captured nodes, instantiated graphs, and the capture
// sequences in progress. A stream that captures records kernels, copies and sets as nodes instead of
// running them; cuGraphLaunch replays an instantiated graph's nodes on a stream with the normal cost
// model. Everything here is guarded by state().mutex, like the rest of the driver state.
#pragma once

#include "driver_state.h"
#include "timeline.h"

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace tbdsim::driver {

struct Graph;

// The memory behind one graph allocation node (cuGraphAddMemAllocNode, or cuMemAllocAsync on a
// capturing stream). Its address is fixed when the node is made and stays valid for the graph's
// life (host memory backs it all along: device pointers are host memory here); device capacity is
// charged only while the allocation is live, from the node's execution to its free (the device's
// graph memory reservation, api_graph_memory.cpp). Shared by the node, its copies in executable
// graphs and, while live, the allocation table's entry; the last owner returns the host memory.
struct GraphMemBlock : std::enable_shared_from_this<GraphMemBlock> {
    uintptr_t address = 0;
    size_t bytes = 0;      // requested
    size_t accounted = 0;  // rounded as cuMemAlloc rounds
    Context* context = nullptr;
    bool mmapped = false;
    uint32_t owner_graph_id = 0;     // the graph of the allocation node
    uint32_t freed_by_graph_id = 0;  // the graph holding a free node for it (0: none yet)
    bool live = false;               // allocated by a launch and not freed since: in state().allocations
    // What find_allocation answers for the address while the allocation is not live: the address
    // is reserved for the graph, so nodes, copies and sets may be made on it (never in the table).
    Allocation reserved;
    ~GraphMemBlock();  // caller holds the mutex (the block unregisters itself)
};

struct GraphNode {
    // Empty: only orders (cuGraphAddEmptyNode). EventRecord, EventWait, Host and Child nodes are
    // added by hand only (api_graph_node_kinds.cpp).
    // MemAlloc / MemFree: graph memory nodes (api_graph_memory.cpp).
    enum class Kind { Kernel, Memcpy, Memset, Empty, EventRecord, EventWait, Host, Child, MemAlloc, MemFree };
    Kind kind = Kind::Kernel;
    uint64_t id = 0;  // process-wide, CUPTI's graphNodeId

    // Kernel: the launch as given, its arguments copied by the parameter layout at capture time (a
    // captured launch must not depend on the caller's argument storage, which may be gone by replay).
    const Function* function = nullptr;
    uint32_t grid[3] = {1, 1, 1};
    uint32_t block[3] = {1, 1, 1};
    uint32_t shared_mem = 0;
    KernelCost cost;
    std::vector<uint8_t> params;

    // Memcpy: rows of `width` bytes (height 1 for 1D); Memset: `width` elements of `element` bytes.
    uintptr_t dst = 0, src = 0;
    size_t width = 0, height = 1, dst_pitch = 0, src_pitch = 0;
    uint32_t copy_kind = 0;  // TbdsimCopyKind
    uint32_t value = 0, element = 1;
    uint64_t bytes = 0;

    // Graphs built by hand (api_graph_nodes.cpp): the nodes this one depends on, and pointers into
    // `params` by the parameter layout (cuGraphKernelNodeGetParams hands them out).
    std::vector<GraphNode*> dependencies;
    std::vector<void*> param_pointers;

    // EventRecord / EventWait: the event (checked at replay: a destroyed one is skipped). Host: the
    // function and its argument. Child: the embedded graph, a clone this node owns (Graph::parent).
    CUevent event = nullptr;
    CUhostFn host_fn = nullptr;
    void* host_data = nullptr;
    Graph* child = nullptr;

    // MemAlloc / MemFree: the memory allocated or freed; MemAlloc: the access descriptors given
    // (cuGraphMemAllocNodeGetParams hands them out, owned by the node).
    std::shared_ptr<GraphMemBlock> memory;
    std::vector<CUmemAccessDesc> access;
};

// The shape of a graph as cuGraphExecUpdate compares it: node kinds in creation order, each node's
// dependencies (indices of earlier nodes, in edge order) and a child node's graph, recursively.
struct GraphShape {
    std::vector<GraphNode::Kind> kinds;
    std::vector<std::vector<size_t>> dependencies;
    std::vector<GraphShape> children;  // per node; empty for nodes that are not child graphs
};

struct Graph {
    uint32_t id = 0;  // CUPTI's graphId
    Context* context = nullptr;
    std::vector<std::unique_ptr<GraphNode>> nodes;  // capture order; stable addresses (CUgraphNode)
    // Embedded in a child graph node of `parent` (cuGraphChildGraphNodeGetGraph hands it out): it is
    // destroyed with that graph, never by cuGraphDestroy.
    Graph* parent = nullptr;
};

struct GraphExec {
    uint32_t graph_id = 0;  // of the graph it was instantiated from
    Context* context = nullptr;
    // A copy, child graphs flattened in place (a child node's nodes replay where it stands): the
    // graph may be destroyed, the executable keeps working.
    std::vector<GraphNode> nodes;
    GraphShape shape;  // of the graph at instantiation, for cuGraphExecUpdate
    bool has_memory_nodes = false;     // allocation or free nodes: one executable per graph at a time
    bool auto_free_on_launch = false;  // CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
};

// --- graphs built by hand (api_graph_nodes.cpp, api_graph_node_kinds.cpp); callers hold the mutex ---

Graph* live_graph(CUgraph handle);
GraphExec* live_graph_exec(CUgraphExec handle);
// The node behind a handle and the graph that owns it, or null.
GraphNode* find_graph_node(CUgraphNode handle, Graph** owner = nullptr);
// Validates the graph and the dependencies (nodes of that graph), then appends a node of `kind`.
CUresult add_graph_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t count, GraphNode::Kind kind,
                        GraphNode*& added);
// A deep copy of `source` (fresh graph and node ids, dependencies within the copy), registered as a
// live graph embedded in `parent`.
Graph* clone_graph(const Graph& source, Graph* parent);
// Frees a graph and the graphs embedded in its child nodes.
void destroy_graph(Graph* graph);
// The graph's nodes with child graphs flattened in place; `sources` (if given) gets each one's node.
std::vector<GraphNode> flatten_graph(const Graph& graph, std::vector<const GraphNode*>* sources = nullptr);
GraphShape shape_of(const Graph& graph);

struct Capture {
    uint64_t id = 0;  // unique per capture sequence (cuStreamGetCaptureInfo)
    Graph* graph = nullptr;
    Stream* origin = nullptr;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    std::thread::id thread;  // the thread that began it
    bool invalidated = false;
    CUgraphNode last_node = nullptr;  // what the next node depends on (cuStreamGetCaptureInfo)
};

// --- capture rules (capture.cpp); callers hold state().mutex ------------------------------------

// Work (kernel launch, async copy or set) about to go onto `stream`. Returns the capture sequence that
// takes it as a node, or null when it runs; `rc` is set when it may do neither: the stream's capture
// was invalidated (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), or the legacy stream is used while a
// blocking stream of its context captures (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, which invalidates
// that capture).
Capture* capture_for_work_slow(Stream& stream, CUresult& rc);
inline Capture* capture_for_work(Stream& stream, CUresult& rc) {
    rc = CUDA_SUCCESS;
    // Nothing captures anywhere (the common case): every launch, copy and set passes here.
    return state().captures.empty() ? nullptr : capture_for_work_slow(stream, rc);
}

// Calls that wait for or query `stream`, or enqueue what capture does not model (events, host
// functions, stream-ordered allocations, synchronous copies): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
// on a capturing stream (the capture is invalidated), _IMPLICIT on the legacy stream as above.
CUresult check_not_capturing_slow(Stream& stream);
inline CUresult check_not_capturing(Stream& stream) {
    return state().captures.empty() ? CUDA_SUCCESS : check_not_capturing_slow(stream);
}

// cuCtxSynchronize: illegal while any stream of the context captures (invalidates them all).
CUresult check_context_not_capturing(Context& context);

// "Potentially unsafe" calls (cuMemAlloc, cuMemFree, pinned and managed allocation), judged by the
// calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode): prohibited calls
// return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate the captures that prohibit them.
CUresult check_unsafe_call();

// Appends a node to the capture's graph and returns it with its id set.
GraphNode& add_captured_node(Capture& capture, GraphNode::Kind kind);

// --- graph memory nodes (api_graph_memory.cpp); callers hold the mutex ---------------------------

// A new block of `bytes` for an allocation node of `graph` in `context`: address and host memory
// now, device capacity at launch.
CUresult make_graph_block(Graph& graph, Context& context, size_t bytes, std::shared_ptr<GraphMemBlock>& out);
// The block for a free node of `graph` at `address`: CUDA_ERROR_INVALID_VALUE for an address no
// allocation node returned, or one already freed by a graph. Marks the block freed by `graph`.
CUresult claim_graph_block_for_free(const Graph& graph, uintptr_t address, std::shared_ptr<GraphMemBlock>& out);
// The block whose allocation starts at `address`, or null.
GraphMemBlock* find_graph_block(uintptr_t address);
bool graph_has_memory_nodes(const Graph& graph);
// Before a replay: frees (auto-free) or refuses (CUDA_ERROR_INVALID_VALUE) allocations of the
// executable still live from its last launch, then grows the device's reservation to what the
// replay will use (CUDA_ERROR_OUT_OF_MEMORY when it cannot). `freed` gets the frees' records.
CUresult prepare_graph_memory(const GraphExec& exec, Stream& stream, std::vector<TbdsimRecord>& freed);
// An allocation node's or free node's effect at its point in the replay. True when it allocated or
// freed: `record` (the node's replay record on entry) is then the alloc or free record to publish.
bool replay_memory_node(const GraphNode& node, Stream& stream, TbdsimRecord& record);
// The graph-memory side of freeing a live graph allocation (cuMemFree, cuMemFreeAsync, auto-free);
// the entry has already left the allocation table.
void release_graph_allocation(const Allocation& allocation);

// --- replay (api_graph.cpp) ----------------------------------------------------------------------

// Host functions in stream order (api_host_func.cpp): `fn(user)` runs on the driver's callback
// thread when the device timeline reaches this point of `stream`. Caller holds the mutex.
void enqueue_host_function(Stream& stream, CUhostFn fn, void* user);
// The live event behind a handle (an interprocess one brought up to date), or null.
Event* find_event(CUevent handle);

}  // namespace tbdsim::driver
