// What the tagger knows about a run: the subset of a trace that bears on memory roles, loaded once
// into flat arrays (ids are indices) so the rules can walk it many times cheaply.
#pragma once

#include "tbdprof/tagger/tagger.h"
#include "touch_list.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace {
class Database;
struct LibraryCallRow;
}

namespace tbdprof::tagger {

constexpr int32_t kNone = -1;
// An allocation that kernels point into at this many different offsets may hold several tensors (a
// caching allocator's segment, an arena, a statically planned block): it is examined for tensors
// inside (subranges.h), and counts as multi-tensor only when those tensors play different roles.
// (Examining every allocation addressed at two or more offsets was tried: no tuning shape gained,
// and it cost accuracy elsewhere; docs/tagging.md.)
constexpr size_t kPooledOffsets = 16;

// A unit of device work in launch order: a kernel, a copy or a set.
// Members ordered so that it takes 48 bytes (one per kernel of the run: the model's largest array;
// the touches, when there are any, in a block of their own).
struct WorkItem {
    enum class Kind : uint8_t { Kernel, CopyHtoD, CopyDtoH, CopyDtoD, Set };
    int64_t launch_ns = 0;  // host time it was enqueued (device start when unknown)
    int64_t start_ns = 0;   // device start
    int64_t end_ns = 0;
    TouchList touches;
    int32_t function = kNone;      // kernels: function id (for repetition detection)
    int32_t library_call = kNone;  // index into TraceModel::library_calls
    int32_t process = 0;
    Kind kind = Kind::Kernel;
};
static_assert(sizeof(WorkItem) <= 48, "one work item per kernel: keep it within 48 bytes");

// Which operands of its work's library call a pointer is: the call names the pointer's allocation
// as that operand, at the pointer's address. One pointer can be several (A and B of x^T x, A and C
// of an in-place call). Decided while loading, where the call's operand addresses are at hand, so
// that no library call keeps its addresses (32 bytes a call, one call per few kernels).
struct CallOperandOf {
    bool a = false, b = false, c = false, workspace = false;
};

// One pointer into an allocation, as the work used it: the raw evidence sub-range derivation starts
// from (kept only for pooled traces, see TraceModel::pointer_uses).
// PointerUse::slot of a use that is no plain kernel's pointer word (a copy, a set, a library operand),
// and of a plain kernel's pointer passed in several words of its parameters (an in-place operand).
constexpr uint32_t kNoSlot = UINT32_MAX;
constexpr uint32_t kSeveralSlots = UINT32_MAX - 1;

struct PointerUse {
    uint32_t work = 0;        // index into TraceModel::work
    int32_t allocation = kNone;
    uint64_t offset = 0;      // pointer - allocation address
    int64_t bytes = 0;        // extent the use covers when known (copies, sets, GEMM operands); 0 unknown
    bool exact = false;       // bytes is the exact extent (copies, sets), not a lower bound (GEMM)
    Access access = Access::Unknown;
    CallOperandOf operand_of_call = {};  // all false unless its work is a library call's
    // A plain kernel's pointer: which word of its function's parameters held it (one id per function,
    // parameter and byte offset, the same in every launch; below TraceModel::kernel_slots).
    uint32_t slot = kNoSlot;
    // slot == kSeveralSlots: where TraceModel::several_word_slots lists the words (their count, then
    // each word's slot); kNoSlot otherwise.
    uint32_t several_at = kNoSlot;
};

// One mapping (the trace's allocation) of a segment joined from end-to-end mappings (mapped_segments.h).
struct MappedPiece {
    int64_t id = 0;       // allocations.id
    uint64_t offset = 0;  // from the segment's address
    int64_t bytes = 0;
};

// A math library that made an allocation for itself (model.cpp, mark_library_handle_allocations).
struct LibraryMade {
    std::string library;      // "cuBLAS", "cuBLASLt", "cuDNN"; empty: none
    std::string entry_point;  // the library's outermost named frame (cublasCreate_v2); empty: unnamed
};

struct Allocation {
    int64_t id = 0;  // allocations.id in the trace
    int32_t process = 0;
    uint64_t address = 0;
    int64_t bytes = 0;
    int64_t alloc_ns = 0;
    std::optional<int64_t> free_ns;
    int64_t stack = 0;
    uint32_t distinct_offsets = 0;  // different offsets kernel arguments pointed at (capped)
    // Allocated by a math library itself (inside cublasCreate, cudnnCreate...), by its stack.
    bool made_by_library_handle = false;
    LibraryMade made_by{};  // which library, and its entry point when a frame names it
    // A tensor of a pooled segment (with_subranges) that plain kernels wrote only through words of
    // their by-value parameters that never start a value (output_slots.h): stale pointers an
    // elementwise kernel's struct keeps from earlier launches, not writes. False where unknown.
    bool written_only_through_input_words = false;
    // Mappings joined into this segment (id is the first one's); empty: the trace's allocation as is.
    std::vector<MappedPiece> pieces{};
};

// What a collective communication call (NCCL, library_calls.op 'nccl_*') does with its operands
// (collectives.h): a reduction sums the ranks' inputs into its output (all-reduce, reduce-scatter,
// reduce); a gather copies every rank's input into each output (all-gather, broadcast); other:
// point-to-point and group calls.
enum class Collective : uint8_t { None, Reduction, Gather, Other };

// Members ordered so that it takes 40 bytes: a run can make one library call per few kernels. Not
// kept: the trace's id (loading maps ids to indices) and the operand addresses
// (PointerUse::operand_of_call says which pointer is which operand).
struct LibraryCall {
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    int32_t process = 0;
    // Allocation indices, from the builder's resolution (library_calls.a_allocation ...); kNone unresolved.
    int32_t a = kNone, b = kNone, c = kNone, workspace = kNone;
    // The call reads its output operand before writing it, by the op's documented semantics: axpy
    // (y = alpha x + y), scal (x = alpha x), ger (A = alpha x y^T + A). A GEMM's C is read only when
    // beta != 0, which the trace does not record; it counts as overwritten.
    bool output_read = false;
    Collective collective = Collective::None;  // a communication call: a is the send, c the receive buffer
};
static_assert(sizeof(LibraryCall) <= 40, "one per library call: keep it within 40 bytes");

// The addresses of a library call's operands and the bytes each spans at least (0 unknown). Only the
// pointer uses of pooled traces need them, made while loading, so the model does not keep them per
// call: load_model reads them again, for pooled traces only.
struct CallOperands {
    uint64_t a_address = 0, b_address = 0, c_address = 0, workspace_address = 0;
    int64_t a_bytes = 0, b_bytes = 0, c_bytes = 0, workspace_bytes = 0;
    // The operand's bytes are its exact extent, recorded from the call's descriptors
    // (library_calls.a_bytes, b_bytes, c_bytes), not a lower bound from the GEMM shape.
    bool a_exact = false, b_exact = false, c_exact = false;
};

// The operands of one library_calls row: recorded extents where the row has them, else the GEMM
// shape's lower bounds (model.cpp says which ops).
CallOperands call_operands(const trace::LibraryCallRow& row);

// Which operands of `call` (whose addresses are `operands`) the pointer `address` into allocation
// `allocation` (a model index) is.
CallOperandOf operand_of_call(const LibraryCall& call, const CallOperands& operands, int32_t allocation,
                              uint64_t address);

// A span on the host: a named range, a host wait, a capture window (tagger.h).
using Range = HostRange;

// A region the program registered inside an allocation (NVTX memory extension, the trace's
// memory_regions; nvtx_regions.h): a tensor it told us about, with its name.
struct RegisteredRegion {
    int32_t allocation = kNone;  // index into TraceModel::allocations
    uint64_t offset = 0;         // from the allocation's address
    int64_t bytes = 0;
    int64_t begin_ns = 0;                 // registered (host time)
    std::optional<int64_t> end_ns;        // unregistered, resized or its heap ended; absent: never
    std::string name;                     // empty: never named
};

struct TraceModel {
    std::vector<Allocation> allocations;  // device-side allocations only (no pinned host memory)
    std::vector<WorkItem> work;           // ordered by launch time
    std::vector<LibraryCall> library_calls;
    std::vector<Range> ranges;
    // Host waits (device, stream, event and implicit synchronizations), sorted by begin: where the
    // host finished with a step that ends by waiting for the device.
    std::vector<Range> host_waits;
    // Capture windows (capture control); empty when the whole run was recorded. Work exists only
    // inside them; allocations throughout.
    std::vector<Range> capture_windows;
    bool has_argument_info = false;       // any kernel -> allocation edges at all
    // Copies or library calls with addresses but no allocations resolved for them by the builder: a
    // trace built before the builder stored them (docs/tagging.md says what is lost).
    bool operands_unresolved = false;
    // Some allocation is pointed into at kPooledOffsets or more offsets (an arena, a caching
    // allocator). Only then pointer_uses holds every pointer into a device allocation, per work item.
    bool pooled = false;
    std::vector<PointerUse> pointer_uses;
    std::vector<uint32_t> several_word_slots;  // PointerUse::several_at's lists, one after another
    uint32_t kernel_slots = 0;                 // PointerUse::slot ids in use: [0, kernel_slots)
    // Per PointerUse::slot: whether the word lies inside a by-value aggregate (word_reads.h,
    // AggregateWords); kept for pooled models, empty otherwise.
    std::vector<bool> aggregate_words;
    // Regions the program registered, by allocation then offset; any makes the model pooled.
    std::vector<RegisteredRegion> regions;
    // The run's end (run.duration_ns, ns from its start): memory never freed is held until then.
    // 0 when unknown (a model built by hand, a trace without its run row).
    int64_t run_end_ns = 0;
};

// Reads a trace through the trace library; throws trace::SqliteError when the file cannot be read.
// `written`: the trace's ranges (moved into the model) and allocations as the caller has them
// (tag_trace_file's second form); absent: read from the file.
TraceModel load_model(const trace::Database& db, std::optional<WrittenRows> written = std::nullopt);

}  // namespace tbdprof::tagger
