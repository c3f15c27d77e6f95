-- tbdprof trace format, version 1: the SQLite schema of one recorded run.
--
-- This file is the single source of the schema: the build embeds it into the binary (see
-- trace/CMakeLists.txt) and docs/trace-format.md documents every column. The format version lives in
-- PRAGMA user_version, set by the builder after this script; it is NOT the product version.
--
-- Conventions (readers may rely on them within a format version):
--   * Times are nanoseconds relative to run.start_monotonic_ns (CLOCK_MONOTONIC), so they stay small
--     and SQLite stores them in few bytes. Durations are nanoseconds. Sizes are bytes.
--   * Text lives in `strings` and is referenced by id where a table has many rows (kernels); tables
--     with few rows hold text directly.
--   * Small enumerations are stored as lowercase text ('device', 'htod', ...), except in `kernels`,
--     which has none, to stay within 48 bytes per kernel.
--   * Addresses and handles are the process's own 64-bit values, stored as SQLite integers (values
--     above 2^63 appear negative; bit patterns are preserved).

-- One row: the run as a whole.
CREATE TABLE run (
    id                     INTEGER PRIMARY KEY CHECK (id = 1),
    command_line           TEXT NOT NULL,     -- argv of the recorded command, joined with spaces
    host                   TEXT,              -- hostname
    start_unix_ns          INTEGER NOT NULL,  -- wall-clock time (CLOCK_REALTIME ns) of time 0
    start_monotonic_ns     INTEGER NOT NULL,  -- CLOCK_MONOTONIC ns of time 0
    duration_ns            INTEGER NOT NULL,  -- time 0 to the last recorded event
    tool_version           TEXT NOT NULL,     -- tbdprof product version that built this file
    simulated_device       INTEGER NOT NULL,  -- 1: tbdprof's simulated GPU, 0: a real device
    clock_source           TEXT NOT NULL,     -- 'cupti': device timestamps from CUPTI; 'host': host
                                              -- launch times only; 'mixed': some of each
    host_timed_kernels     INTEGER NOT NULL,  -- kernels without a device record (duration_ns NULL)
    exit_status            INTEGER,           -- the command's exit status, 128+N when killed by N
    crash_signal           INTEGER,           -- signal that killed the command, NULL otherwise
    truncated_files        INTEGER NOT NULL   -- raw files that ended mid-record or were corrupt
);

-- Free-form facts about the run that are not worth a column (builder warnings, options).
CREATE TABLE run_notes (
    key   TEXT NOT NULL,
    value TEXT
);

CREATE TABLE strings (
    id   INTEGER PRIMARY KEY,
    text TEXT NOT NULL
);

CREATE TABLE processes (
    id           INTEGER PRIMARY KEY,  -- small id used by the other tables
    pid          INTEGER NOT NULL,
    parent_pid   INTEGER,
    command_line TEXT,                 -- argv joined with spaces
    executable   TEXT,
    start_ns     INTEGER NOT NULL,     -- when the collector started in this process
    end_ns       INTEGER,              -- last event recorded in this process
    truncated    INTEGER NOT NULL      -- 1 when its raw file ended mid-record (crash) or was corrupt
);

CREATE TABLE threads (
    id            INTEGER PRIMARY KEY,
    process       INTEGER NOT NULL REFERENCES processes(id),
    tid           INTEGER NOT NULL,  -- kernel thread id
    name          TEXT,
    first_seen_ns INTEGER
);

CREATE TABLE devices (
    id                INTEGER PRIMARY KEY,  -- equals the CUDA ordinal
    name              TEXT NOT NULL,
    cc_major          INTEGER NOT NULL,
    cc_minor          INTEGER NOT NULL,
    sm_count          INTEGER NOT NULL,
    memory_bytes      INTEGER NOT NULL,
    clock_khz         INTEGER NOT NULL,     -- SM clock
    fp32_lanes_per_sm INTEGER NOT NULL,
    fp32_peak_flops   REAL NOT NULL,        -- 2 * sm_count * fp32_lanes_per_sm * clock
    simulated         INTEGER NOT NULL
);

CREATE TABLE streams (
    id       INTEGER PRIMARY KEY,
    process  INTEGER NOT NULL REFERENCES processes(id),
    device   INTEGER,
    handle   INTEGER NOT NULL  -- CUstream value; 0 is the legacy default stream
);

-- Kernel functions: one row per distinct mangled name.
CREATE TABLE functions (
    id      INTEGER PRIMARY KEY,
    name    INTEGER NOT NULL REFERENCES strings(id),  -- demangled (equals mangled when not mangled)
    mangled INTEGER NOT NULL REFERENCES strings(id)
);

-- Kernels, ordered by start time (id order is time order). Kept narrow on purpose: <= 48 bytes each.
CREATE TABLE kernels (
    id           INTEGER PRIMARY KEY,
    process      INTEGER NOT NULL,  -- processes.id
    thread       INTEGER,           -- threads.id of the launching thread; NULL: no host launch seen
    device       INTEGER NOT NULL,  -- devices.id
    stream       INTEGER,           -- streams.id
    function     INTEGER NOT NULL,  -- functions.id
    start_ns     INTEGER NOT NULL,  -- device start; the host launch time when duration_ns is NULL
    duration_ns  INTEGER,           -- device end - start; NULL: no device record (host-timed)
    queued_ns    INTEGER,           -- start_ns - host launch time; NULL: no host launch seen
    grid         INTEGER,           -- packed: x + (y-1) * 2^32 + (z-1) * 2^48 (see kernel_view)
    block        INTEGER,           -- packed like grid
    shared_bytes INTEGER,           -- dynamic shared memory
    correlation  INTEGER,           -- CUPTI correlation id; NULL when host-timed
    library_call INTEGER,           -- library_calls.id when launched inside a library call
    graph_launch INTEGER            -- graph_launches.id when a CUDA graph replay ran it (added in format 1)
);

-- CUDA graph replays (cuGraphLaunch / cudaGraphLaunch), ordered by launch time. The kernels a replay
-- ran point here (kernels.graph_launch); launches captured into the graph are not kernels.
CREATE TABLE graph_launches (
    id         INTEGER PRIMARY KEY,
    process    INTEGER NOT NULL,
    thread     INTEGER,           -- threads.id of the launching thread
    stream     INTEGER,           -- streams.id
    launch_ns  INTEGER NOT NULL,  -- host time of the cuGraphLaunch call
    graph_exec INTEGER NOT NULL,  -- CUgraphExec handle
    graph      INTEGER,           -- CUgraph it was instantiated from; NULL when not recorded
    kernels    INTEGER NOT NULL   -- kernels rows this replay ran
);

-- Copies (cudaMemcpy*, cuMemcpy*).
CREATE TABLE copies (
    id          INTEGER PRIMARY KEY,
    process     INTEGER NOT NULL,
    thread      INTEGER,
    device      INTEGER NOT NULL,
    stream      INTEGER,
    kind        TEXT NOT NULL,     -- 'htod', 'dtoh', 'dtod', 'htoh', 'default'
    bytes       INTEGER NOT NULL,
    src         INTEGER,
    dst         INTEGER,
    start_ns    INTEGER NOT NULL,  -- like kernels.start_ns
    duration_ns INTEGER,           -- NULL: host-timed
    queued_ns   INTEGER,
    async       INTEGER,           -- 1 for *Async calls
    api         TEXT,              -- 'runtime', 'driver', 'driver_proc_address', 'library'
    correlation INTEGER
    , src_allocation INTEGER, dst_allocation INTEGER
    -- Added later at the end (no version bump; the columns absent in older traces): allocations.id of
    -- the allocation src and dst point into, live when the host enqueued the copy, resolved by the
    -- builder's sweep as kernel_allocations are; NULL when in none. On one line after a leading comma,
    -- as library_calls.a_bytes (see there).
);

-- Sets (cudaMemset*, cuMemsetD*).
CREATE TABLE sets (
    id          INTEGER PRIMARY KEY,
    process     INTEGER NOT NULL,
    thread      INTEGER,
    device      INTEGER NOT NULL,
    stream      INTEGER,
    value       INTEGER,
    bytes       INTEGER NOT NULL,
    dst         INTEGER,
    start_ns    INTEGER NOT NULL,
    duration_ns INTEGER,
    queued_ns   INTEGER,
    async       INTEGER,
    api         TEXT,
    correlation INTEGER
    , dst_allocation INTEGER  -- added later: as copies.dst_allocation
);

-- Host API calls that wait (synchronizations).
CREATE TABLE api_calls (
    id       INTEGER PRIMARY KEY,
    process  INTEGER NOT NULL,
    thread   INTEGER,
    kind     TEXT NOT NULL,     -- 'device_sync', 'stream_sync', 'event_sync', 'stream_wait_event',
                                -- 'implicit_sync'
    begin_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    handle   INTEGER            -- stream or event handle, 0 for device-wide
);

-- Call stacks of allocations, deduplicated.
CREATE TABLE stacks (
    id      INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    depth   INTEGER NOT NULL
);

CREATE TABLE frames (
    id      INTEGER PRIMARY KEY,
    process INTEGER NOT NULL,
    ip      INTEGER NOT NULL,
    symbol  INTEGER REFERENCES strings(id),  -- demangled function name; NULL when unknown
    module  INTEGER REFERENCES strings(id),  -- path of the object file
    offset  INTEGER                          -- ip - module load address
);

-- Frames of each stack, innermost first (position 0).
CREATE TABLE stack_frames (
    stack    INTEGER NOT NULL,
    position INTEGER NOT NULL,
    frame    INTEGER NOT NULL,
    PRIMARY KEY (stack, position)
) WITHOUT ROWID;

CREATE TABLE allocations (
    id          INTEGER PRIMARY KEY,
    process     INTEGER NOT NULL,
    thread      INTEGER,
    device      INTEGER NOT NULL,
    address     INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,
    alloc_ns    INTEGER NOT NULL,
    free_ns     INTEGER,           -- NULL: never freed while recording
    kind        TEXT NOT NULL,     -- 'device', 'device_async', 'pinned_host', 'managed', 'device_mapped'
    api         TEXT,              -- see copies.api
    stream      INTEGER,           -- CUstream handle of stream-ordered allocations
    stack       INTEGER,           -- stacks.id; NULL when stacks were off
    free_thread INTEGER
);

-- Memory categories (docs: weights, gradients, ...). Empty until tagging fills it.
CREATE TABLE allocation_categories (
    allocation INTEGER PRIMARY KEY REFERENCES allocations(id),
    category   TEXT NOT NULL,  -- 'weights', 'gradients', 'optimizer_state', 'activations', 'workspace',
                               -- 'input', 'other'
    confidence REAL,           -- 0..1
    rule       TEXT,           -- short id of the rule that decided
    reason     TEXT,           -- the same, in words
    evidence   TEXT,           -- added later (at the end): which work read and wrote it, in which phase
    -- Added later (at the end): the reason and the evidence as strings ids, each distinct text stored
    -- once; the tagger writes these and leaves reason and evidence NULL. A reader takes
    -- coalesce(reason, strings.text of reason_string), the same for evidence.
    reason_string   INTEGER,   -- strings.id
    evidence_string INTEGER    -- strings.id
);

-- Tensors inside pooled segments (a caching allocator's cudaMalloc blocks), recovered by tagging from
-- the pointers the work used. Empty until tagging fills it, and when no segment is pooled.
CREATE TABLE allocation_subranges (
    id         INTEGER PRIMARY KEY,
    allocation INTEGER NOT NULL REFERENCES allocations(id),  -- the segment
    offset     INTEGER NOT NULL,  -- bytes from the segment's address
    bytes      INTEGER NOT NULL,
    begin_ns   INTEGER NOT NULL,  -- first work that used it (host launch time)
    end_ns     INTEGER NOT NULL,  -- end of the last work that used it
    category   TEXT NOT NULL,     -- as allocation_categories.category
    confidence REAL,
    rule       TEXT,
    reason     TEXT,
    evidence   TEXT,              -- added later: as allocation_categories.evidence
    reason_string   INTEGER,      -- added later: as in allocation_categories
    evidence_string INTEGER
);

-- Training iterations and their phases, filled by analysis (tagging), empty in a fresh recording.
CREATE TABLE iterations (
    id       INTEGER PRIMARY KEY,
    process  INTEGER NOT NULL,
    idx      INTEGER NOT NULL,  -- 0-based iteration number
    begin_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    source   TEXT NOT NULL,     -- 'nvtx', 'repetition', 'import'
    -- Added later (at the end, no version bump): the span of the device work launched in the step
    -- (NULL in older traces and imported ones), and 'training' or 'non_training' (a validation pass
    -- or checkpoint save set apart by the tagger; idx -1; NULL in older traces means 'training').
    device_begin_ns INTEGER,
    device_end_ns   INTEGER,
    kind            TEXT
);

CREATE TABLE phases (
    iteration INTEGER NOT NULL REFERENCES iterations(id),
    kind      TEXT NOT NULL,  -- 'forward', 'backward', 'optimizer'
    begin_ns  INTEGER NOT NULL,  -- host time: from the phase's first launch to its end
    end_ns    INTEGER NOT NULL,
    -- Added later (at the end, no version bump): the span of the device work launched in the phase by
    -- the iteration's process (start of its first item to the end of its last; NULL in older traces
    -- and when the phase launched none).
    device_begin_ns INTEGER,
    device_end_ns   INTEGER,
    PRIMARY KEY (iteration, kind)
) WITHOUT ROWID;

-- Which allocations a kernel's pointer arguments point into: one row per argument word that fell
-- inside an allocation live at launch time.
CREATE TABLE kernel_allocations (
    kernel     INTEGER NOT NULL,  -- kernels.id
    param      INTEGER NOT NULL,  -- index of the kernel parameter
    param_word INTEGER NOT NULL,  -- byte offset of the pointer word inside that parameter
    allocation INTEGER NOT NULL,  -- allocations.id
    offset     INTEGER NOT NULL,  -- pointer value - allocation address
    read_only  INTEGER NOT NULL,  -- 1 when the parameter is a pointer to const (a hint)
    PRIMARY KEY (kernel, param, param_word)
) WITHOUT ROWID;

CREATE TABLE library_calls (
    id              INTEGER PRIMARY KEY,
    process         INTEGER NOT NULL,
    thread          INTEGER,
    name            TEXT NOT NULL,     -- e.g. 'cublasSgemm_v2'
    op              TEXT NOT NULL,     -- 'gemm', 'gemm_strided_batched', 'gemm_batched'
    begin_ns        INTEGER NOT NULL,
    end_ns          INTEGER NOT NULL,
    stream          INTEGER,           -- CUstream handle
    m               INTEGER,
    n               INTEGER,
    k               INTEGER,
    batch           INTEGER,
    a_type          INTEGER,           -- cudaDataType values
    b_type          INTEGER,
    c_type          INTEGER,
    compute_type    INTEGER,           -- cublasComputeType_t value
    transa          INTEGER,
    transb          INTEGER,
    flops           REAL,              -- 2*m*n*k*batch
    a               INTEGER,           -- operand addresses
    b               INTEGER,
    c               INTEGER,
    workspace       INTEGER,
    workspace_bytes INTEGER,
    -- Added after format 1 at the end of the table, without a version bump (NULL in older traces):
    math_mode       INTEGER,           -- cublasMath_t of the handle at the call; NULL for cuBLASLt
    precision       TEXT               -- what the arithmetic ran in: 'fp32', 'tf32', 'fp16', 'bf16',
                                       -- 'fp8', 'fp64', 'int8', 'other'
    , a_bytes INTEGER, b_bytes INTEGER, c_bytes INTEGER
    -- Added later at the end (NULL in older traces and where not known): the bytes operand a, b, c
    -- spans from its address, from the call's descriptors. Written on one line after a leading comma
    -- so that the table's text, comments aside, stays what older traces have plus ",a_bytes INTEGER..."
    -- (trace_validation.cpp compares the two; a comment right after a comma would break the prefix).
    , a_allocation INTEGER, b_allocation INTEGER, c_allocation INTEGER, workspace_allocation INTEGER
    -- Added later still: the allocations a, b, c and workspace point into, as copies.src_allocation.
);

-- NVTX ranges (recorded by a later version; the table exists so readers need not check).
CREATE TABLE ranges (
    id       INTEGER PRIMARY KEY,
    process  INTEGER NOT NULL,
    thread   INTEGER,
    begin_ns INTEGER NOT NULL,
    end_ns   INTEGER,
    name     TEXT,
    domain   TEXT
);

CREATE TABLE cpu_samples (
    process   INTEGER NOT NULL,
    ts_ns     INTEGER NOT NULL,
    user_ns   INTEGER NOT NULL,  -- cumulative CPU time of the process
    system_ns INTEGER NOT NULL
);

-- Events the collector could not keep. A complete trace has no rows here.
CREATE TABLE dropped_events (
    process INTEGER NOT NULL,
    cause   TEXT NOT NULL,  -- 'ring_full', 'cupti_buffers', 'stack_table_full', 'unknown'
    count   INTEGER NOT NULL
);

-- Capture windows: with capture control (tbdprof record --capture-range, --delay/--duration,
-- --steps) kernels, copies, sets, library calls, synchronizations and ranges were recorded only
-- inside these; allocations and frees always. No rows: the whole run was recorded.
CREATE TABLE capture_windows (
    process  INTEGER NOT NULL REFERENCES processes(id),
    begin_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    reason   TEXT NOT NULL  -- 'cudaProfilerStart', 'nvtx range NAME', '--steps N:M (...)', '--delay ...'
);

-- Hardware counter values per kernel, from `tbdprof record --metrics SET` (CUPTI range profiler, one
-- auto range per kernel, kernel replay). Empty without --metrics. Added after format 1 without a
-- version bump (a new table): a reader must treat a missing table as empty.
CREATE TABLE kernel_metrics (
    kernel INTEGER NOT NULL,  -- kernels.id
    metric INTEGER NOT NULL,  -- strings.id of the CUPTI metric name
    value  REAL               -- NULL: CUPTI could not count it for this kernel (not available, not 0)
);

-- NVTX's memory extension (nvtx3/nvToolsExtMem.h): what a sub-allocator told tools about the memory
-- inside its allocations. Added after format 1 without a version bump (new tables): a reader must
-- treat a missing table as empty. No rows: the program registered nothing.
-- Heaps (nvtxMemHeapRegister): the memory a sub-allocator manages.
CREATE TABLE memory_heaps (
    id            INTEGER PRIMARY KEY,
    process       INTEGER NOT NULL REFERENCES processes(id),
    thread        INTEGER,           -- threads.id of the registering thread
    handle        INTEGER NOT NULL,  -- the nvtxMemHeapHandle_t the collector returned (1, 2, ...)
    address       INTEGER NOT NULL,  -- its virtual range (0 and 0 when not given)
    bytes         INTEGER NOT NULL,
    allocation    INTEGER,           -- allocations.id holding `address` when registered; NULL: none
    device        INTEGER,           -- that allocation's device; NULL: none (host memory, unknown)
    usage         TEXT NOT NULL,     -- 'sub_allocator', 'layout', 'sub_allocator,layout', 'unknown'
    name          TEXT,              -- the descriptor's message; NULL: none
    domain        TEXT,              -- NVTX domain; NULL: the default domain
    register_ns   INTEGER NOT NULL,  -- host time of the call
    unregister_ns INTEGER            -- nvtxMemHeapUnregister; NULL: still registered at the end
);

-- Regions (nvtxMemRegionsRegister): the tensors inside. One row per region as long as its extent
-- stays the same: a resize ends the row ('resized') and starts a new one at the same address with the
-- new size and the same name, so each row is one extent over one span of time.
CREATE TABLE memory_regions (
    id            INTEGER PRIMARY KEY,
    process       INTEGER NOT NULL REFERENCES processes(id),
    heap          INTEGER,           -- memory_heaps.id; NULL: the process-wide heap or an unknown handle
    address       INTEGER NOT NULL,  -- also its nvtxMemRegionHandle_t
    bytes         INTEGER NOT NULL,
    allocation    INTEGER,           -- allocations.id holding `address` when registered; NULL: none
    device        INTEGER,           -- that allocation's device; NULL: none
    name          TEXT,              -- the last name nvtxMemRegionsName gave it; NULL: never named
    register_ns   INTEGER NOT NULL,  -- registration (or the resize that started this row)
    unregister_ns INTEGER,           -- when it ended; NULL: still registered at the end
    end_reason    TEXT               -- 'unregistered', 'resized', 'heap_unregistered', 'heap_reset',
                                     -- 'replaced' (another region registered at its address); NULL
);

-- Multi-process jobs: each process's place in the job, from its launcher's environment (RANK,
-- LOCAL_RANK, WORLD_SIZE, or Open MPI's OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE). One row per process
-- that had them; none for the others. Added after format 1 without a version bump (a new table).
CREATE TABLE process_ranks (
    process    INTEGER PRIMARY KEY REFERENCES processes(id),
    rank       INTEGER NOT NULL,
    local_rank INTEGER NOT NULL,  -- RANK when LOCAL_RANK is not set
    world_size INTEGER NOT NULL
);

-- The operands of a library call beyond library_calls.a, b, c and workspace, with the direction the
-- library's documentation gives them: a cuBLASLt matmul's epilogue bias, aux buffer and bias
-- gradient (from the matmul descriptor); batch norm's scale, shift, running and saved statistics,
-- residual and reserve space; an RNN's hidden and cell states, the inputs backward passes read
-- again and its reserve space; dropout's reserve and states. Added after format 1 without a version
-- bump (a new table).
CREATE TABLE library_call_operands (
    library_call INTEGER NOT NULL REFERENCES library_calls(id),
    process      INTEGER NOT NULL,
    role         TEXT NOT NULL,  -- 'bias', 'epilogue_aux', 'bias_gradient', 'scale', 'running_mean',
                                 -- 'running_variance', 'saved_mean', 'saved_inv_variance', 'scale_gradient',
                                 -- 'shift_gradient', 'reserve', 'residual', 'hidden_in', 'cell_in',
                                 -- 'hidden_out', 'cell_out', 'input', 'dropout_states'
    access       TEXT NOT NULL,  -- 'read', 'write', 'read_write'
    address      INTEGER NOT NULL,
    bytes        INTEGER,        -- the bytes it spans from address; NULL when not known
    allocation   INTEGER         -- allocations.id it points into (as copies.src_allocation); NULL: none
);

-- NCCL communication calls: one row per call that was recorded as a library call (the call's
-- library_calls row has its times, stream, buffers, their extents and the kernels it launched, and
-- library_calls.op 'nccl_*'). Calls inside ncclGroupStart/End launch their kernel in ncclGroupEnd,
-- which has a library_calls row of its own (op 'nccl_group_end') and none here. Added after format 1
-- without a version bump (a new table).
CREATE TABLE nccl_calls (
    library_call INTEGER PRIMARY KEY REFERENCES library_calls(id),
    process      INTEGER NOT NULL,
    op           TEXT NOT NULL,     -- 'all_reduce', 'reduce_scatter', 'all_gather', 'broadcast', 'reduce',
                                    -- 'send', 'recv'
    communicator INTEGER,           -- ncclComm_t handle (per process)
    rank         INTEGER,           -- ncclCommUserRank; NULL when it could not be asked
    nranks       INTEGER,           -- ncclCommCount; NULL likewise
    count        INTEGER NOT NULL,  -- the call's count argument (elements per rank)
    datatype     TEXT NOT NULL,     -- 'float32', 'bfloat16', ... (ncclDataType_t without 'nccl'); 'other'
    bytes        INTEGER NOT NULL,  -- count x element size
    reduction    TEXT,              -- 'sum', 'prod', 'max', 'min', 'avg', 'premulsum'; NULL: none
    peer         INTEGER,           -- send and recv: the other rank; else NULL
    root         INTEGER,           -- broadcast and reduce: the root rank; else NULL
    stream       INTEGER,           -- cudaStream_t handle
    -- Added later (older traces lack the column): the communicator's identity, the same on every rank
    -- of it and different between communicators (docs/fleet.md, "What names a communicator"): a hash
    -- of the ncclUniqueId, of the split's parent, number and color, or of the ncclCommInitAll call.
    -- NULL: the communicator was created where the collector did not see it.
    communicator_identity INTEGER
);

-- One row per allocation, with its category once tagging has run.
CREATE VIEW memory_allocations AS
SELECT a.id, a.process, a.device, a.address, a.bytes, a.alloc_ns, a.free_ns, a.kind, c.category
FROM allocations AS a LEFT JOIN allocation_categories AS c ON c.allocation = a.id;

-- Kernels with names and unpacked launch geometry.
CREATE VIEW kernel_view AS
SELECT k.id, k.process, k.thread, k.device, k.stream, n.text AS name, m.text AS mangled,
       k.start_ns, k.start_ns + k.duration_ns AS end_ns, k.duration_ns, k.start_ns - k.queued_ns AS launch_ns,
       k.grid & 4294967295 AS grid_x, ((k.grid >> 32) & 65535) + 1 AS grid_y, ((k.grid >> 48) & 65535) + 1 AS grid_z,
       k.block & 4294967295 AS block_x, ((k.block >> 32) & 65535) + 1 AS block_y,
       ((k.block >> 48) & 65535) + 1 AS block_z,
       k.shared_bytes, k.correlation, k.library_call, k.graph_launch
FROM kernels AS k JOIN functions AS f ON f.id = k.function
     JOIN strings AS n ON n.id = f.name JOIN strings AS m ON m.id = f.mangled;

-- The trace FORMAT version (not the product version). The build reads it from this line; bump it as
-- docs/trace-format.md says.
PRAGMA user_version = 1;
