// The simulated driver's private interface, reached the way real NVIDIA libraries reach private driver
// features: cuGetExportTable() with a table id. Only the simulated libraries (cuBLAS, CUPTI) and our
// tests use it; application code never sees it, so the public CUDA ABI stays exactly the real one.
//
// Stability: struct_size grows when fields are appended; readers check it before touching a field.
#pragma once

#include <cuda.h>
#include <tbdprof/gpu_catalog/simulated_driver.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Table id for cuGetExportTable(&table, &TBDSIM_PRIVATE_API_ID): the id by which the product also
// recognises the simulated driver, declared in the stage-0 GPU catalog.
#define TBDSIM_PRIVATE_API_ID TBDPROF_SIMULATED_DRIVER_TABLE_ID

// What happened on the device timeline. One record per kernel, copy, set, allocation and free.
typedef enum TbdsimRecordKind {
    TBDSIM_RECORD_KERNEL = 1,
    TBDSIM_RECORD_MEMCPY = 2,
    TBDSIM_RECORD_MEMSET = 3,
    TBDSIM_RECORD_ALLOC = 4,
    TBDSIM_RECORD_FREE = 5,
} TbdsimRecordKind;

typedef enum TbdsimCopyKind {
    TBDSIM_COPY_HTOD = 1,
    TBDSIM_COPY_DTOH = 2,
    TBDSIM_COPY_DTOD = 3,
    TBDSIM_COPY_HTOH = 4,
} TbdsimCopyKind;

typedef enum TbdsimMemoryKind {
    TBDSIM_MEMORY_DEVICE = 1,         // cuMemAlloc / cudaMalloc
    TBDSIM_MEMORY_DEVICE_ASYNC = 2,   // cuMemAllocAsync / cudaMallocAsync (stream-ordered pool)
    TBDSIM_MEMORY_PINNED_HOST = 3,    // cuMemAllocHost / cuMemHostAlloc / cudaMallocHost
    TBDSIM_MEMORY_MANAGED = 4,        // cuMemAllocManaged / cudaMallocManaged
    TBDSIM_MEMORY_DEVICE_MAPPED = 5,  // cuMemMap of a cuMemCreate allocation into a reserved range
} TbdsimMemoryKind;

// Precision of annotated work (cuBLAS tells the cost model what a kernel computes).
typedef enum TbdsimPrecision {
    TBDSIM_PRECISION_NONE = 0,
    TBDSIM_PRECISION_FP32 = 1,
    TBDSIM_PRECISION_TF32 = 2,  // tensor cores
    TBDSIM_PRECISION_FP16 = 3,  // tensor cores
    TBDSIM_PRECISION_BF16 = 4,  // tensor cores
    TBDSIM_PRECISION_FP64 = 5,
} TbdsimPrecision;

typedef struct TbdsimRecord {
    uint32_t kind;            // TbdsimRecordKind
    uint32_t device;          // device ordinal
    uint32_t context_id;      // CUPTI-style context id (1 = primary context of device 0)
    uint32_t stream_id;       // CUPTI-style stream id; 0 for allocations outside any stream
    uint32_t correlation_id;  // unique per work item or memory operation, process-wide
    uint32_t sub_kind;        // TbdsimCopyKind for MEMCPY, TbdsimMemoryKind for ALLOC/FREE
    uint64_t start_ns;        // device time (CLOCK_MONOTONIC ns); ALLOC/FREE: when it took effect
    uint64_t end_ns;          // device time; ALLOC/FREE: equal to start_ns
    uint64_t address;         // MEMCPY: destination, MEMSET/ALLOC/FREE: the address
    uint64_t src_address;     // MEMCPY: source
    uint64_t bytes;           // MEMCPY/MEMSET/ALLOC/FREE size in bytes
    uint32_t grid[3];         // KERNEL only
    uint32_t block[3];        // KERNEL only
    uint32_t shared_mem_bytes;  // KERNEL: dynamic shared memory
    uint32_t static_shared_mem_bytes;
    uint32_t registers_per_thread;
    uint32_t memset_value;    // MEMSET
    uint32_t precision;       // TbdsimPrecision of annotated kernels
    uint32_t is_async;        // 1 for *Async API variants
    double flops;             // floating-point operations of the kernel, 0 when unknown
    const char* name;         // KERNEL: mangled name; valid until the module is unloaded
    uint64_t host_launch_ns;  // host time the work was enqueued (CLOCK_MONOTONIC ns)
    // Work replayed by cuGraphLaunch (0 otherwise): the id of the graph it was instantiated from and
    // of the node, as CUPTI's graphId / graphNodeId. All work of one replay shares correlation_id.
    uint32_t graph_id;
    uint32_t reserved;
    uint64_t graph_node_id;
} TbdsimRecord;

typedef void (*TbdsimRecordSink)(const TbdsimRecord* record, void* user);

// Called on the calling thread when a runtime entry point begins (entering = 1) and ends (0).
typedef void (*TbdsimRuntimeCallListener)(int entering, void* user);

typedef struct TbdsimPrivateApi {
    size_t struct_size;  // sizeof(TbdsimPrivateApi) of the driver that filled it

    // The clock shared by the device timeline, CUPTI timestamps and the ground-truth file.
    uint64_t (*now_ns)(void);

    // Tells the cost model what the next cuLaunchKernel/cuLaunchKernelEx on the calling thread
    // computes (flops > 0); consumed by that launch. Real cuBLAS knows its kernels' work from their
    // names; our cuBLAS says so explicitly so the cost model needs no name parsing.
    void (*annotate_next_launch)(double flops, uint32_t precision);

    // Record sinks are called synchronously, on the thread that enqueued the work, right after the
    // device timeline placed it (start and end are final then). Return value: slot id or -1.
    int (*add_record_sink)(TbdsimRecordSink sink, void* user);
    void (*remove_record_sink)(int slot);

    // Device time at which everything enqueued so far has finished (for CUPTI flushes).
    uint64_t (*device_idle_at_ns)(void);

    // As annotate_next_launch, with the bytes the kernel moves to and from device memory: its
    // duration is then a roofline, max(FLOPs / peak at its precision, bytes / memory bandwidth).
    // flops may be 0 (a pure copy-like kernel); bytes > 0.
    void (*annotate_next_launch_roofline)(double flops, uint32_t precision, double bytes);

    // For the simulated NCCL, whose kernels wait for every rank of a collective: the device time at
    // which the next work on `stream` could start (0 and CUDA_ERROR_INVALID_HANDLE for an unknown
    // stream), and an annotation that makes the next launch on the calling thread a collective: it
    // starts when its stream reaches it (not before `arrival_ns`, what stream_ready_at_ns said when
    // the library posted its arrival); then, inside the launch call and outside the driver's lock,
    // the driver calls resolve_end(start, user), which waits for the other ranks and returns the
    // device time the kernel ends (0: the launch fails with CUDA_ERROR_LAUNCH_FAILED). The kernel
    // lasts at least the smallest kernel duration.
    CUresult (*stream_ready_at_ns)(CUstream stream, uint64_t* ready_ns);
    void (*annotate_next_launch_collective)(uint64_t arrival_ns, uint64_t (*resolve_end)(uint64_t start_ns, void* user),
                                            void* user);

    // Runtime API calls, for CUPTI's RUNTIME activity records. The real runtime reports each of its
    // calls to CUPTI as it begins and ends (CUPTI_CB_DOMAIN_RUNTIME_API), and the work the call enqueues
    // through the driver shares the runtime record's correlation id ("identical to the correlation ID in
    // the driver and runtime API activity record", cupti_activity.h). The simulated runtime calls
    // runtime_call_boundary around its outermost entry points; the driver passes each boundary on to its
    // listeners (the simulated CUPTI) synchronously. add_runtime_call_listener: slot id or -1.
    void (*runtime_call_boundary)(int entering);
    int (*add_runtime_call_listener)(TbdsimRuntimeCallListener listener, void* user);
} TbdsimPrivateApi;

#ifdef __cplusplus
}
#endif
