// The raw event stream: what the collector inside the target process writes, and what the trace
// builder (trace/) reads after the run to make the SQLite trace. It is an internal, per-run format:
// written and read by the same tbdprof build, so it carries a version only to refuse mismatches.
//
// A run directory holds one file per process, `raw-<pid>.tbdraw`: a RawFileHeader, then records.
// Every record starts with a RawRecordHeader; `size` is the whole record's size in bytes, a multiple
// of 8, so a reader can skip kinds it does not know. Records of one thread appear in the order they
// happened; records of different threads are interleaved in chunks. A file that ends mid-record
// (the process crashed) is read up to the last whole record.
//
// Times are nanoseconds, their base in their names (docs/architecture.md, "Times"): `*host_ns` is
// CLOCK_MONOTONIC (host_ns alone: when the event happened), `start_unix_ns` CLOCK_REALTIME, and
// `*_duration_ns`, `*_held_ns` and `cupti_offset_ns` are lengths, not points in time. Device
// timestamps from CUPTI are converted to host monotonic by the collector before they are written (it
// registers a timestamp callback, or measures the offset once), so no field holds device time.
#pragma once

#include <stdint.h>

namespace tbdprof::raw {

inline constexpr char kMagic[8] = {'T', 'B', 'D', 'R', 'A', 'W', '\0', '\1'};
// 2: thread-tagged correlations (RawCorrelation). 3: launches, copies and sets made while their stream
// captured a CUDA graph are marked `captured` (they did not run), graph capture/instantiate/launch records.
// (RawMemRegion and RawNcclComm were added as new kinds without a bump: readers skip kinds they do not
// know.)
inline constexpr uint32_t kVersion = 3;

struct RawFileHeader {
    char magic[8];
    uint32_t version;
    uint32_t pid;
    uint32_t parent_pid;
    uint32_t reserved;
    uint64_t start_host_ns;  // CLOCK_MONOTONIC when the collector started in this process
    uint64_t start_unix_ns;  // CLOCK_REALTIME at the same moment
};
static_assert(sizeof(RawFileHeader) == 40);

enum class RecordKind : uint16_t {
    String = 1,             // RawString: interned text (kernel names, symbols, paths), by id
    ProcessInfo = 2,        // RawProcessInfo + command line string ids
    ThreadInfo = 3,         // RawThreadInfo
    DeviceInfo = 4,         // RawDeviceInfo
    Alloc = 10,             // RawAlloc
    Free = 11,              // RawFree
    Launch = 12,            // RawLaunch (+ candidate pointer words)
    Copy = 13,              // RawCopy
    Set = 14,               // RawSet
    Sync = 15,              // RawSync
    LibraryCall = 16,       // RawLibraryCall
    Range = 17,             // RawRange: an NVTX range (push/pop, start/end) or mark
    LibraryOperand = 19,    // RawLibraryOperand: one more operand of a library call (bias, reserve, ...)
    MemRegion = 18,         // RawMemRegion: an NVTX memory-extension call (heaps, regions, region names)
    NcclComm = 22,          // RawNcclComm: a NCCL communicator was created, with its cross-rank identity
    Stack = 20,             // RawStack: a deduplicated call stack (instruction pointers)
    Frame = 21,             // RawFrame: symbol for one instruction pointer (resolved off the hot path)
    DeviceKernel = 30,      // RawDeviceActivity from CUPTI: device start/end of a kernel
    DeviceCopy = 31,        // RawDeviceActivity: a copy
    DeviceSet = 32,         // RawDeviceActivity: a set
    Correlation = 33,       // RawCorrelation: CUPTI correlation id <-> our launch/copy/set sequence id
    KernelMetric = 34,      // RawKernelMetric: one hardware counter metric of one profiled kernel (--metrics)
    CpuSample = 40,         // RawCpuSample: /proc/self/stat utime+stime, sampled by the writer thread
    Dropped = 50,           // RawDropped: events the collector could not keep, by cause
    ClockSource = 51,       // RawClockSource: where device timestamps came from
    ProcessEnd = 52,        // RawProcessEnd: the collector's last flush ran (how the process ended)
    GraphCapture = 60,      // RawGraphCapture: a stream capture began or ended
    GraphInstantiate = 61,  // RawGraphInstantiate: an executable graph made from (or updated to) a graph
    GraphLaunch = 62,       // RawGraphLaunch: cuGraphLaunch (its kernels are correlated to `sequence`)
    CaptureWindow = 70,     // RawCaptureWindow: a capture window opened or closed (capture control)
};

struct RawRecordHeader {
    RecordKind kind;
    uint16_t size;  // bytes, including this header, multiple of 8
    uint32_t tid;   // kernel thread id of the thread the event happened on
};
static_assert(sizeof(RawRecordHeader) == 8);

// Which API an allocation, copy or launch came through.
enum class ApiPath : uint8_t { Runtime = 1, Driver = 2, DriverViaProcAddress = 3, Library = 4 };

// DeviceMapped: a range mapped by cuMemMap (virtual memory management), from map to unmap.
enum class MemoryKind : uint8_t { Device = 1, DeviceAsync = 2, PinnedHost = 3, Managed = 4, DeviceMapped = 5 };

enum class CopyKind : uint8_t { HostToDevice = 1, DeviceToHost = 2, DeviceToDevice = 3, HostToHost = 4, Default = 5 };

enum class SyncKind : uint8_t { Device = 1, Stream = 2, Event = 3, StreamWaitEvent = 4, Implicit = 5 };

struct RawString {
    RawRecordHeader header;
    uint64_t id;
    uint32_t length;  // bytes of text that follow (not NUL-terminated), then padding to 8
    uint32_t reserved;
};

struct RawProcessInfo {
    RawRecordHeader header;
    uint64_t command_line_string;  // RawString id: argv joined with NUL bytes
    uint64_t executable_string;    // RawString id: /proc/self/exe
    uint64_t hostname_string;
    uint32_t pid;
    uint32_t parent_pid;
    // Appended later (older records read 0): the process's place in a multi-process job, from the
    // launcher's environment (RANK/LOCAL_RANK/WORLD_SIZE, else OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE).
    // world_size 0: not set.
    int32_t rank, local_rank, world_size;
    uint32_t reserved;
};

struct RawThreadInfo {
    RawRecordHeader header;
    uint64_t name_string;  // RawString id
    uint64_t first_seen_host_ns;
};

struct RawDeviceInfo {
    RawRecordHeader header;
    uint64_t name_string;
    uint64_t memory_bytes;
    int32_t ordinal;
    int32_t cc_major;
    int32_t cc_minor;
    int32_t sm_count;
    int32_t clock_khz;
    int32_t fp32_lanes_per_sm;
    uint8_t simulated;  // 1 when the driver is tbdprof's simulated GPU
    uint8_t reserved[7];
};

struct RawAlloc {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t address;
    uint64_t bytes;
    uint64_t stream;    // CUstream handle value (0 = legacy default) for stream-ordered allocations
    uint64_t stack_id;  // RawStack id, 0 when stacks are off
    int32_t device;
    MemoryKind memory_kind;
    ApiPath api;
    uint8_t reserved[2];
};

struct RawFree {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t address;
    uint64_t stream;
    int32_t device;
    MemoryKind memory_kind;
    ApiPath api;
    uint8_t reserved[2];
};

// A kernel launch as the host saw it. `sequence` joins it with CUPTI's device record through a
// RawCorrelation. After the fixed part come `candidate_count` RawPointerCandidate entries: every
// 8-byte word of the arguments that lies within the address range of live device memory. The builder
// decides which allocation each falls in (it knows all lifetimes); the hook does no lookups.
struct RawLaunch {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t sequence;
    uint64_t name_string;  // mangled name
    uint64_t stream;       // CUstream handle value
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_mem_bytes;
    int32_t device;
    uint16_t candidate_count;
    ApiPath api;
    // 1: the stream was capturing a CUDA graph, so the launch became a graph node and did not run;
    // it is the template of the kernels the graph's replays run (see RawGraphCapture).
    uint8_t captured;
    uint8_t reserved[4];
};

struct RawPointerCandidate {
    uint64_t value;
    uint16_t param_index;   // which kernel parameter holds it
    uint16_t param_offset;  // byte offset of the word in that parameter
    uint8_t read_only;      // 1 when the mangled name says pointer-to-const
    uint8_t reserved[3];
};

struct RawCopy {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t sequence;
    uint64_t dst;
    uint64_t src;
    uint64_t bytes;
    uint64_t stream;
    int32_t device;
    CopyKind copy_kind;
    uint8_t async;
    ApiPath api;
    uint8_t captured;  // 1: recorded into a graph by stream capture, did not run (as RawLaunch)
};

struct RawSet {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t sequence;
    uint64_t dst;
    uint64_t bytes;
    uint64_t stream;
    int32_t device;
    uint32_t value;
    uint8_t async;
    ApiPath api;
    uint8_t captured;  // 1: recorded into a graph by stream capture, did not run (as RawLaunch)
    uint8_t reserved[5];
};

enum class CapturePhase : uint8_t { Begin = 1, End = 2 };

// Stream capture (cuStreamBeginCapture_v2 / cuStreamEndCapture, successful calls; an end that reports
// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED is recorded with graph 0). The captured launches, copies and
// sets of one capture sequence are those marked `captured` on `stream` whose sequence lies between the
// Begin record's and the End record's.
struct RawGraphCapture {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t sequence;  // ours, from the same counter as launches
    uint64_t stream;    // CUstream handle value
    uint64_t graph;     // End: the CUgraph made (0 when the capture was invalidated); Begin: 0
    int32_t device;
    CapturePhase phase;
    uint8_t mode;        // CUstreamCaptureMode (Begin)
    uint8_t per_thread;  // 1: a _ptsz entry point (stream 0 is the thread's default stream)
    uint8_t reserved;
};

// cuGraphInstantiateWithFlags (cuGraphInstantiate), or a successful cuGraphExecUpdate: which graph an
// executable graph runs from `host_ns` on.
struct RawGraphInstantiate {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t graph;       // CUgraph
    uint64_t graph_exec;  // CUgraphExec
};

// One replay of an executable graph. `sequence` is pushed as external correlation id around the call,
// so CUPTI ties every kernel, copy and set of the replay to this record, not to the thread.
struct RawGraphLaunch {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t sequence;
    uint64_t stream;      // CUstream handle value
    uint64_t graph_exec;  // CUgraphExec
    int32_t device;
    ApiPath api;
    uint8_t reserved[3];
};

// Capture control (TBDPROF_CAPTURE): the collector records kernels, copies, sets, library calls,
// synchronizations and ranges only inside capture windows; allocations and frees always. One record
// when a window opens (`opened` 1) and one when it closes (0); a window still open at exit ends with
// the process. `reason_string`: why it opened ("cudaProfilerStart", "nvtx range NAME", ...).
struct RawCaptureWindow {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t reason_string;
    uint8_t opened;
    uint8_t reserved[7];
};
static_assert(sizeof(RawCaptureWindow) == 32);

struct RawSync {
    RawRecordHeader header;
    uint64_t begin_host_ns;
    uint64_t end_host_ns;
    uint64_t handle;  // stream or event handle, 0 for device-wide
    SyncKind sync_kind;
    uint8_t reserved[7];
};

// Level-1/2 BLAS (Dot...Ger) were added later; older readers show them as "unknown".
enum class LibraryOp : uint16_t {
    Gemm = 1,
    GemmStridedBatched = 2,
    GemmBatched = 3,
    Dot = 4,
    Axpy = 5,
    Scal = 6,
    Nrm2 = 7,
    Asum = 8,
    Copy = 9,
    Gemv = 10,
    Ger = 11,
    // cuBLAS level 3 beyond GEMM (preload/cublas_level3_hooks.cpp; sizes and FLOPs in collector.md).
    Symm = 12,
    Hemm = 13,
    Syrk = 14,
    Herk = 15,
    Syr2k = 16,
    Her2k = 17,
    Syrkx = 18,
    Herkx = 19,
    // cuDNN (preload/cudnn_hooks.cpp). Convolutions record their implicit-GEMM shape per group
    // (m = N*P*Q, n = K/groups, k = C/groups*R*S, batch = groups); the others m = elements.
    ConvolutionForward = 20,
    ConvolutionBackwardData = 21,
    ConvolutionBackwardFilter = 22,
    ConvolutionBackwardBias = 23,
    BatchNormForwardTraining = 24,
    BatchNormForwardInference = 25,
    BatchNormBackward = 26,
    PoolingForward = 27,
    PoolingBackward = 28,
    ActivationForward = 29,
    ActivationBackward = 30,
    SoftmaxForward = 31,
    SoftmaxBackward = 32,
    AddTensor = 33,
    // cuDNN backend API (cudnnBackendExecute): the graph's main operation decides among the values
    // above for convolutions; these two for the rest.
    Matmul = 34,
    Pointwise = 35,
    // Legacy cuDNN tensor arithmetic and dropout (m = elements of the output; dropout's reserve space
    // has no role column).
    OpTensor = 36,
    ReduceTensor = 37,
    DropoutForward = 38,
    DropoutBackward = 39,
    TransformTensor = 40,
    // cuDNN RNNs (v8 API): m = the time steps run (sum of sequence lengths), n = hidden size,
    // k = input size, batch = layers x directions.
    RnnForward = 41,
    RnnBackwardData = 42,
    RnnBackwardWeights = 43,
    // Local response and divisive normalization (m = elements).
    LrnForward = 44,
    LrnBackward = 45,
    DivisiveNormForward = 46,
    DivisiveNormBackward = 47,
    // CTC loss (m = elements of probs).
    CtcLoss = 48,
    // cuBLAS level 3, continued.
    Trmm = 50,
    Trsm = 51,
    TrsmBatched = 52,
    Geam = 53,
    Dgmm = 54,
    GemmGroupedBatched = 55,  // m, n, k of the first group; batch = problems of all groups
    // cuDNN backend API: a scaled dot-product attention graph (or cuDNN's SDPA operation) run as one
    // fused kernel; m = s_q, n = s_kv, k = head dimension, batch = batch x heads.
    AttentionForward = 56,
    AttentionBackward = 57,
    // NCCL (preload/nccl_hooks.cpp). A NCCL call packs its facts into RawLibraryCall's fields:
    // a = sendbuff, c = recvbuff, a_bytes/c_bytes their extents, m = count (the call's argument),
    // n = number of ranks, k = rank, batch = root (Broadcast, Reduce) or peer (Send, Recv), else -1,
    // workspace = the communicator handle, a_type = ncclDataType_t, compute_type = ncclRedOp_t
    // (255 for a user-created operator), flops 0. ncclGroupEnd is a call of its own (the kernels of
    // the calls in a group are launched inside it).
    NcclAllReduce = 60,
    NcclReduceScatter = 61,
    NcclAllGather = 62,
    NcclBroadcast = 63,
    NcclReduce = 64,
    NcclSend = 65,
    NcclRecv = 66,
    NcclGroupEnd = 67,
};

// The precision a library call's arithmetic runs in, as the collector works it out from the data and
// compute types and the handle's math mode (0 in records written before it was added).
enum class RawPrecision : uint8_t {
    Unknown = 0,
    Fp32 = 1,
    Tf32 = 2,
    Fp16 = 3,
    Bf16 = 4,
    Fp64 = 5,
    Fp8 = 6,
    Int8 = 7,
    Other = 8
};

struct RawLibraryCall {
    RawRecordHeader header;
    uint64_t begin_host_ns;
    uint64_t end_host_ns;
    uint64_t name_string;  // e.g. "cublasSgemm_v2"
    uint64_t stream;
    uint64_t a, b, c;    // operand pointers
    uint64_t workspace;  // workspace pointer (cublasSetWorkspace or the handle's own), 0 if none
    uint64_t workspace_bytes;
    double flops;  // 2*m*n*k*batch
    int64_t m, n, k, batch;
    uint64_t first_sequence;  // launches made inside this call have sequence >= first_sequence
    uint64_t last_sequence;   // ... and <= last_sequence (0 when none)
    LibraryOp op;
    uint8_t a_type, b_type, c_type, compute_type;  // cudaDataType / cublasComputeType values (low byte)
    uint8_t transa, transb;
    // Added after the first version, in what was padding (older records have 0):
    uint8_t math_mode;       // cublasMath_t of the handle at the call + 1; 0 = not recorded (cuBLASLt)
    RawPrecision precision;  // what the arithmetic ran in
    uint8_t reserved[6];
    // Appended later (records written before read them as 0): the bytes each operand spans, from the
    // call's descriptors (cuDNN; a, b read; c written); 0 when not known (cuBLAS, cuBLASLt today).
    uint64_t a_bytes, b_bytes, c_bytes;
};
static_assert(sizeof(RawLibraryCall) == 176);

// An operand of a library call beyond a, b, c and the workspace: a cuBLASLt epilogue's bias or aux
// buffer, batch norm's scale, shift, running and saved statistics, an RNN's reserve space and
// hidden/cell states, dropout's reserve. Written on the call's thread before the call's own record;
// the reader joins it to the RawLibraryCall of the same thread with the same begin_host_ns.
enum class LibraryOperandRole : uint8_t {
    Bias = 2,          // cuBLASLt epilogue bias, or batch norm's shift (bias)
    EpilogueAux = 3,   // cuBLASLt epilogue aux (GELU/ReLU aux written forward, read by *_AUX backward)
    BiasGradient = 4,  // cuBLASLt BGRAD epilogue's bias gradient (written)
    Scale = 5,         // batch norm scale (gamma)
    RunningMean = 6,
    RunningVariance = 7,
    SavedMean = 8,
    SavedInvVariance = 9,
    ScaleGradient = 10,
    ShiftGradient = 11,
    Reserve = 12,        // reserve space: written by forward training, read by backward
    Residual = 13,       // batch norm's z (the added tensor) or its gradient dz
    HiddenIn = 14,       // RNN hx, or its gradient dhx (backward data writes it)
    CellIn = 15,         // RNN cx, or dcx
    HiddenOut = 16,      // RNN hy, or its gradient dhy (backward data reads it)
    CellOut = 17,        // RNN cy, or dcy
    Input = 18,          // an input the a/b roles do not hold (RNN backward data's y, batch norm backward's y)
    DropoutStates = 19,  // the dropout descriptor's random-number states
};

enum class OperandAccess : uint8_t { Read = 1, Write = 2, ReadWrite = 3 };

struct RawLibraryOperand {
    RawRecordHeader header;
    uint64_t call_begin_host_ns;  // the RawLibraryCall's begin_host_ns
    uint64_t address;
    uint64_t bytes;  // 0 when not known
    LibraryOperandRole role;
    OperandAccess access;
    uint8_t reserved[6];
};
static_assert(sizeof(RawLibraryOperand) == 40);

enum class RangeKind : uint8_t { PushPop = 1, StartEnd = 2, Mark = 3 };

// One NVTX range, written when it ends (so the header's tid is the thread that ended it). A mark is a
// range with begin_host_ns == end_host_ns. name_string/domain_string are RawString ids, 0 = none (the default
// domain). Ranges still open when the process ends are not written.
struct RawRange {
    RawRecordHeader header;
    uint64_t begin_host_ns;
    uint64_t end_host_ns;
    uint64_t name_string;
    uint64_t domain_string;
    // Added after the first version (readers zero-fill shorter records):
    uint32_t begin_tid;    // thread that began it (start/end ranges may end elsewhere); 0 = header.tid
    RangeKind range_kind;  // 0 in older records
    uint8_t depth;         // push/pop nesting level on its thread (0 = outermost), 0 otherwise
    uint8_t reserved[2];
};
static_assert(sizeof(RawRange) == 48);

// NVTX's memory extension (nvtx3/nvToolsExtMem.h): how a sub-allocator tells tools what lies inside
// its allocations. One record per heap and per region element of each call (a batch call of N regions
// writes N records, in its order). Recorded always, as allocations are, whatever the capture window.
enum class MemRegionOp : uint8_t {
    HeapRegister = 1,      // heap = the handle we returned; address/bytes = its range; usage as given
    HeapUnregister = 2,    // heap; its regions end with it
    HeapReset = 3,         // heap (0: process-wide): every region in it ends, the heap stays
    RegionRegister = 4,    // heap (0: process-wide); address/bytes of the region (also its handle)
    RegionResize = 5,      // address (the region's start); bytes = the new size
    RegionUnregister = 6,  // address (pointer or handle: both are the region's start address)
    RegionName = 7,        // address; name_string = the name (0: the name was cleared)
};

struct RawMemRegion {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t heap;  // heap handle: 1, 2, ... in registration order; 0 = process-wide
    uint64_t address;
    uint64_t bytes;
    uint64_t name_string;    // RawString id: region name (RegionName), heap name (HeapRegister); 0 none
    uint64_t domain_string;  // RawString id of the NVTX domain, 0 = default domain
    uint32_t usage;          // HeapRegister: NVTX_MEM_HEAP_USAGE_TYPE_* bits
    MemRegionOp op;
    uint8_t reserved[3];
};
static_assert(sizeof(RawMemRegion) == 64);

// How a NCCL communicator was created (preload/nccl_comm_hooks.cpp), which decides its identity.
enum class NcclCommOrigin : uint8_t {
    InitRank = 1,  // ncclCommInitRank / ncclCommInitRankConfig: a hash of the ncclUniqueId's bytes
    Split = 2,     // ncclCommSplit: a hash of (parent identity, split number on the parent, color)
    InitAll = 3,   // ncclCommInitAll: a hash of (process, call number); its ranks share it
};

// A communicator the process created, recorded after the creating call succeeded. `identity` is the
// same on every rank of the communicator and differs between communicators (ranks of other processes
// compute it from what NCCL's API gave them alike); it names no process-local handle.
struct RawNcclComm {
    RawRecordHeader header;
    uint64_t host_ns;       // when the creating call returned
    uint64_t communicator;  // the new ncclComm_t handle (per process)
    uint64_t identity;
    int32_t rank;    // ncclCommUserRank; -1 when it could not be asked
    int32_t nranks;  // ncclCommCount; -1 likewise
    NcclCommOrigin origin;
    uint8_t reserved[7];
};
static_assert(sizeof(RawNcclComm) == 48);

struct RawStack {
    RawRecordHeader header;
    uint64_t id;
    uint32_t depth;  // instruction pointers that follow (uint64_t each), innermost first
    uint32_t reserved;
};

struct RawFrame {
    RawRecordHeader header;
    uint64_t ip;
    uint64_t symbol_string;  // demangled function name, 0 if unknown
    uint64_t module_string;  // path of the object file
    uint64_t offset;         // ip - module load address
};

struct RawDeviceActivity {
    RawRecordHeader header;
    uint64_t start_host_ns;  // converted from CUPTI's device clock by the collector
    uint64_t end_host_ns;
    uint64_t correlation_id;  // CUPTI's
    uint64_t name_string;     // kernels: mangled name from CUPTI
    uint64_t bytes;           // copies and sets
    uint32_t stream_id;       // CUPTI stream id
    int32_t device;
    uint32_t context_id;
    uint8_t copy_kind;  // CopyKind for copies
    uint8_t reserved[3];
};

// `sequence` is either our sequence number (copies and sets: pushed around the call, so the join is
// exact) or, with kThreadCorrelationTag set, the id of the thread that enqueued the work (kernel
// launches: each thread pushes its tag once and keeps it, so a launch costs no CUPTI call; the builder
// pairs a thread's launches with its device records in order).
inline constexpr uint64_t kThreadCorrelationTag = uint64_t{1} << 63;

struct RawCorrelation {
    RawRecordHeader header;
    uint64_t correlation_id;  // CUPTI's
    uint64_t sequence;        // ours, or kThreadCorrelationTag | tid
};

// `tbdprof record --metrics`: the value of one metric for one kernel, from CUPTI's range profiler
// (auto ranges, kernel replay). Kernels are identified by order: `range_number` counts the kernels the
// profiler saw on the context since it was enabled (before the context's first recorded launch), so
// the builder pairs range n with the n-th kernel of that context by CUPTI correlation id. A NaN value
// means CUPTI could not count that metric for that kernel (not available, never 0).
struct RawKernelMetric {
    RawRecordHeader header;
    uint32_t context_id;  // CUPTI's, as in RawDeviceActivity
    uint32_t reserved;
    uint64_t range_number;
    uint64_t metric_string;  // metric name, e.g. smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
    double value;
};

struct RawCpuSample {
    RawRecordHeader header;
    uint64_t host_ns;
    uint64_t user_cpu_duration_ns;  // cumulative CPU time of the process
    uint64_t system_cpu_duration_ns;
};

// WriteFailed: records the writer could not write (full disk), counted after the file was cut back.
enum class DropCause : uint32_t { RingFull = 1, CuptiBuffers = 2, StackTableFull = 3, WriteFailed = 4 };

struct RawDropped {
    RawRecordHeader header;
    uint64_t count;
    DropCause cause;
    uint32_t reserved;
    // Appended later (older files read 0 = unknown): CLOCK_MONOTONIC times of the first and the last
    // of the `count` drops, so that the report says where in the timeline events are missing.
    uint64_t first_host_ns;
    uint64_t last_host_ns;
};

// How a process image ended, as far as its collector saw: a raw file without a RawProcessEnd ended
// without the last flush (exit_group, SIGKILL, an _exit the collector could not intercept), and the
// events of its last few milliseconds may be missing.
enum class EndReason : uint32_t { Exit = 1, QuickExit = 2, Signal = 3, Exec = 4 };

struct RawProcessEnd {
    RawRecordHeader header;
    EndReason reason;
    uint32_t reserved;
    uint64_t host_ns;
    // Appended later (older files read 0): back-pressure. How long the program's threads were held,
    // in total, because a thread's ring was full (waiting for the writer) or because CUPTI held more
    // buffer memory than the hold threshold (waiting for the device), and how many holds there were.
    uint64_t ring_held_ns;
    uint64_t cupti_held_ns;
    uint32_t ring_holds;
    uint32_t cupti_holds;
};

enum class ClockSource : uint32_t { Cupti = 1, HostOnly = 2 };

struct RawClockSource {
    RawRecordHeader header;
    ClockSource source;
    uint32_t reserved;
    uint64_t cupti_offset_ns;  // added to CUPTI timestamps to get CLOCK_MONOTONIC
};

}  // namespace tbdprof::raw
