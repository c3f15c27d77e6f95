// The simulated driver's state: devices, contexts, allocations, modules, streams and events.
// One process-wide mutex guards all of it. Nothing blocks while holding it: host waits for device
// work (synchronize calls) sleep after releasing it.
#pragma once

#include "gpu_model.h"
#include "module_image.h"

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace tbdsim::driver {

struct Context;
struct Capture;    // graph_state.h
struct Graph;
struct GraphExec;

struct MemPool;  // api_mempool.cpp

struct Device {
    int ordinal = 0;
    MemPool* default_pool = nullptr;  // created with the device
    MemPool* current_pool = nullptr;  // cuDeviceSetMemPool; the default pool unless set
    const GpuModel* model = nullptr;
    uint64_t memory_bytes = 0;  // capacity (model, or TBDSIM_MEMORY_BYTES)
    uint64_t used_bytes = 0;    // device + managed allocations, rounded to the allocation granularity
    // Graph memory (api_graph_memory.cpp): live graph allocations' bytes, and the physical memory
    // reserved for them (charged in used_bytes; kept after frees until cuDeviceGraphMemTrim).
    uint64_t graph_used_bytes = 0, graph_used_high_bytes = 0;
    uint64_t graph_reserved_bytes = 0, graph_reserved_high_bytes = 0;
    Context* primary = nullptr;
    int primary_refcount = 0;
    unsigned primary_flags = 0;
};

struct Stream {
    uint32_t id = 0;            // CUPTI-style stream id
    Context* context = nullptr;
    unsigned flags = 0;         // CU_STREAM_NON_BLOCKING or default
    int priority = 0;
    bool legacy = false;        // the NULL / CU_STREAM_LEGACY stream
    bool per_thread = false;    // a thread's CU_STREAM_PER_THREAD stream
    uint64_t ready_ns = 0;      // device time at which the last enqueued work ends
    int pending_host_calls = 0; // cuLaunchHostFunc callbacks not yet finished
    Capture* capture = nullptr; // the capture sequence this stream records into (graph_state.h)
};

struct Context {
    uint32_t id = 0;
    Device* device = nullptr;
    Stream legacy_stream;
    std::set<Stream*> streams;  // created and per-thread streams (not the legacy one)
    int pending_host_calls = 0;
    unsigned flags = 0;         // cuCtxCreate's flags (created contexts)
    std::set<Context*> peers;   // contexts whose memory this one may access (cuCtxEnablePeerAccess)
    bool created = false;       // by cuCtxCreate (not a device's primary context)
    bool destroyed = false;     // by cuCtxDestroy: the handle is invalid from then on
};

struct Event {
    Context* context = nullptr;
    unsigned flags = 0;
    bool recorded = false;
    uint64_t time_ns = 0;       // device time at which the recorded work completes
    // An interprocess event once exported (cuIpcGetEventHandle) or opened (cuIpcOpenEventHandle):
    // the last record's completion time (0: never recorded) in memory shared by the processes
    // (api_ipc.cpp). Device time is CLOCK_MONOTONIC, the same clock in every process.
    std::atomic<uint64_t>* shared_time = nullptr;
    int ipc_fd = -1;            // exported: the memfd behind shared_time
};

// An interprocess event's record state, brought in from or sent to the memory it shares with
// other processes (no-ops for other events). Caller holds the mutex.
void load_shared_record(Event& event);
void store_shared_record(const Event& event);
// Unmaps an interprocess event's shared memory before the event is deleted.
void release_shared_record(Event& event);

struct Function {
    const KernelInfo* info = nullptr;
    struct Module* module = nullptr;
    // The name activity records carry: a copy that outlives the module. Real CUPTI's kernel records
    // name kernels with strings CUPTI owns, so a record delivered after cuModuleUnload (buffers are
    // often flushed at exit, after cublasDestroy unloaded cuBLAS's kernels) still has a valid name.
    const char* record_name = nullptr;
};

// `name` copied into storage that lives as long as the process; one copy per distinct name.
const char* persistent_kernel_name(const std::string& name);

struct Module {
    ModuleImage image;
    Context* context = nullptr;
    std::vector<std::unique_ptr<Function>> functions;  // one per kernel, stable addresses
    std::map<std::string, std::pair<void*, size_t>> globals;  // host memory behind device globals
    bool is_library = false;
};

// Mapped: a range of physical memory (cuMemCreate) mapped into a reserved range with cuMemMap; its
// host memory and capacity belong to the physical allocation (api_vmm.cpp), not to this entry.
enum class MemoryKind { Device, DeviceAsync, PinnedHost, Managed, ModuleGlobal, Mapped };

struct Allocation {
    uintptr_t address = 0;
    size_t bytes = 0;           // requested
    size_t accounted = 0;       // charged against device capacity
    MemoryKind kind = MemoryKind::Device;
    Context* context = nullptr;
    bool mmapped = false;
    bool accessible = true;     // Mapped: once cuMemSetAccess granted read-write access
    bool registered = false;    // PinnedHost by cuMemHostRegister: the program's memory, never freed here
    MemPool* pool = nullptr;    // DeviceAsync: the pool it came from
    int ipc_fd = -1;            // exported (cuIpcGetMemHandle): the memfd now behind the memory
    bool imported = false;      // opened from another process's handle (api_ipc.cpp)
    // A graph allocation's, live from its node's execution to its free (api_graph_memory.cpp).
    std::shared_ptr<struct GraphMemBlock> graph_block = nullptr;
};

struct DriverState {
    std::mutex mutex;
    std::condition_variable host_calls_done;  // signalled when a host function returns
    bool initialized = false;
    // Set in a child forked after cuInit: CUDA does not survive fork, so every call there fails
    // with CUDA_ERROR_NOT_INITIALIZED, cuInit included (docs/simgpu.md, "fork").
    bool forked_after_init = false;
    std::vector<std::unique_ptr<Device>> devices;
    std::vector<std::unique_ptr<Context>> contexts;
    std::set<Stream*> live_streams;
    std::set<Event*> live_events;
    std::set<Module*> live_modules;
    std::set<const Function*> live_functions;
    std::map<uintptr_t, Allocation> allocations;  // by start address
    uint32_t next_stream_id = 13;  // CUPTI numbers created streams from here; 7 is the legacy stream
    uint32_t next_context_id = 1;
    // CUDA graphs and stream capture (graph_state.h, capture.cpp, api_graph.cpp).
    std::set<Capture*> captures;  // capture sequences in progress
    std::set<Graph*> live_graphs;
    std::set<GraphExec*> live_graph_execs;
    std::map<uintptr_t, struct GraphMemBlock*> graph_blocks;  // graph allocations by address
    std::set<uint32_t> graphs_instantiated_with_memory;       // graph ids with a live executable
    uint64_t next_capture_id = 1;
    uint32_t next_graph_id = 1;
    uint64_t next_graph_node_id = 1;
    // Virtual memory management (api_vmm.cpp): reserved address ranges by base, physical allocations.
    std::map<uintptr_t, size_t> reservations;
    std::set<struct PhysicalMemory*> physical;
    std::map<uintptr_t, struct PhysicalMemory*> mapped_physical;  // by mapping start
    std::set<MemPool*> pools;  // stream-ordered memory pools, default ones included
};

DriverState& state();

// Must hold state().mutex for the helpers below.
const Allocation* find_allocation(uintptr_t address);  // containing `address`, or null
Context* current_context();                            // this thread's, or null
Context* make_context(Device& device);                 // a new context with its legacy stream
Device* device_at(CUdevice ordinal);                   // null for an invalid ordinal
void set_current_context(Context* context);
std::vector<Context*>& context_stack();

// Resolves a stream handle for the calling thread. `per_thread_api` is true for _ptsz/_ptds entry
// points, where the NULL handle means the per-thread stream. Returns null for an invalid handle.
Stream* resolve_stream(CUstream handle, bool per_thread_api);

// Stream-ordered allocation from `pool` (null: the stream's device's current pool), api_memory.cpp.
CUresult allocate_stream_ordered(CUdeviceptr* dptr, size_t bytes, CUstream stream, bool per_thread, MemPool* pool);
// The pool behind a handle, or null (api_mempool.cpp). Caller holds the mutex.
MemPool* live_pool(CUmemoryPool handle);
MemPool* default_pool_of(Device& device);
// A stream-ordered allocation of `bytes` from `pool` was made: update its high-water marks.
void note_pool_use(MemPool& pool);

// Error checks shared by the API files.
CUresult check_initialized();
CUresult require_context(Context*& out);

}  // namespace tbdsim::driver
