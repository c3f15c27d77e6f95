#include "model.h"

#include "collectives.h"
#include "echoed_words.h"
#include "id_index.h"
#include "library_operands.h"
#include "mapped_segments.h"
#include "nvtx_regions.h"
#include "opaque_calls.h"
#include "unrecorded_operands.h"
#include "word_reads.h"

#include <tbdprof/trace/fast_scans.h>
#include <tbdprof/trace/library_modules.h>
#include <tbdprof/trace/tables.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

using trace::OptionalInt;

// Kernels, copies and sets: launched (host) at device start less the queue time, or at device start.
template <class Row>
WorkItem timed_item(const Row& r, WorkItem::Kind kind) {
    WorkItem w;
    w.kind = kind;
    w.process = static_cast<int32_t>(r.process);
    w.launch_ns = r.start_ns - r.queued_ns.value_or(0);
    w.start_ns = r.start_ns;
    w.end_ns = r.start_ns + r.duration_ns.value_or(0);
    return w;
}

int64_t element_bytes(OptionalInt cuda_data_type) {
    switch (cuda_data_type.value_or(-1)) {
        case 0:
            return 4;  // CUDA_R_32F
        case 1:
            return 8;  // CUDA_R_64F
        case 2:
            return 2;  // CUDA_R_16F
        case 3:
            return 1;  // CUDA_R_8I
        case 4:
            return 8;  // CUDA_C_32F
        case 5:
            return 16;  // CUDA_C_64F
        case 14:
            return 2;  // CUDA_R_16BF
        default:
            return 0;  // unknown: no size evidence
    }
}

}  // namespace

// The bytes a GEMM operand spans at least: op(A) is m x k, op(B) k x n, C m x n, per batch entry.
// A leading dimension or batch stride larger than the matrix only makes the real extent larger.
// Batched (pointer-array) GEMMs pass arrays of pointers, whose size says nothing about a tensor.
// Operand extents the collector recorded (library_calls.a_bytes, b_bytes, c_bytes, from the call's
// descriptors or leading dimensions) replace the shape rule: for cuDNN the implicit-GEMM shape
// (im2col) is not the size of x, w or y at all. NULL (older traces, unknown) keeps the shape rule.
CallOperands call_operands(const trace::LibraryCallRow& r) {
    CallOperands c{.a_address = uint64_t(r.a.value_or(0)),
                   .b_address = uint64_t(r.b.value_or(0)),
                   .c_address = uint64_t(r.c.value_or(0)),
                   .workspace_address = uint64_t(r.workspace.value_or(0)),
                   .workspace_bytes = std::max<int64_t>(0, r.workspace_bytes.value_or(0))};
    const int64_t m = r.m.value_or(0), n = r.n.value_or(0), k = r.k.value_or(0);
    if ((r.op == "gemm" || r.op == "gemm_strided_batched") && m > 0 && n > 0 && k > 0) {
        const int64_t batch = r.op == "gemm" ? 1 : std::max<int64_t>(1, r.batch.value_or(1));
        c.a_bytes = m * k * batch * element_bytes(r.a_type);
        c.b_bytes = k * n * batch * element_bytes(r.b_type);
        c.c_bytes = m * n * batch * element_bytes(r.c_type);
    }
    const OptionalInt recorded[3] = {r.a_bytes, r.b_bytes, r.c_bytes};
    int64_t* sizes[3] = {&c.a_bytes, &c.b_bytes, &c.c_bytes};
    bool* exact[3] = {&c.a_exact, &c.b_exact, &c.c_exact};
    for (int i = 0; i < 3; ++i) {
        if (recorded[i].value_or(0) <= 0) continue;
        *sizes[i] = *recorded[i];
        *exact[i] = true;
    }
    return c;
}

CallOperandOf operand_of_call(const LibraryCall& call, const CallOperands& operands, int32_t allocation,
                              uint64_t address) {
    if (allocation == kNone) return {};
    return {.a = call.a == allocation && operands.a_address == address,
            .b = call.b == allocation && operands.b_address == address,
            .c = call.c == allocation && operands.c_address == address,
            .workspace = call.workspace == allocation && operands.workspace_address == address};
}

namespace {

// A workspace the call was given zero bytes of holds nothing the call could write: its pointer is
// no operand (a cuDNN plan that needs no workspace still gets the variant pack's pointer, which a
// caching allocator may place inside a live tensor; taken as the call's scratch, it made that tensor
// "library workspace"). Only a size recorded as 0 counts: an unrecorded size says nothing.
void drop_empty_workspace(const trace::LibraryCallRow& r, LibraryCall& c) {
    if (!r.workspace_bytes.has_value() || *r.workspace_bytes != 0) return;
    c.workspace = kNone;
}

// Rows read in id order, put in the order of a time member (ties keep id order).
template <class T>
void sort_by(std::vector<T>& rows, int64_t T::*time) {
    const auto before = [time](const T& a, const T& b) { return a.*time < b.*time; };
    if (!std::is_sorted(rows.begin(), rows.end(), before)) std::stable_sort(rows.begin(), rows.end(), before);
}

// Pointer uses (sub-range evidence) of pooled traces. A pointer that does not fall inside its
// allocation is dropped rather than given a wrapped-around offset.
void add_use(TraceModel& m, uint32_t work, int32_t allocation, uint64_t address, int64_t bytes, bool exact,
             Access access) {
    if (!m.pooled || allocation == kNone || address == 0) return;
    const Allocation& a = m.allocations[size_t(allocation)];
    if (address < a.address || address - a.address >= uint64_t(std::max<int64_t>(a.bytes, 1))) return;
    m.pointer_uses.push_back(
        {work, allocation, address - a.address, std::max<int64_t>(bytes, 0), exact && bytes > 0, access});
}

void add_library_pointer_uses(TraceModel& m, uint32_t work, const LibraryCall& call, const CallOperands& c) {
    add_use(m, work, call.a, c.a_address, c.a_bytes, c.a_exact, Access::Read);
    if (c.b_address != c.a_address) add_use(m, work, call.b, c.b_address, c.b_bytes, c.b_exact, Access::Read);
    add_use(m, work, call.c, c.c_address, c.c_bytes, c.c_exact, Access::Write);
    // The workspace of a call that recorded its operands' extents (cuDNN: the buffer and size passed to
    // the call) is exactly that size, scratch the call overwrites; a cuBLAS handle's workspace size is
    // the handle's setting, not what one call used, and stays a lower bound.
    bool recorded = c.a_exact || c.b_exact || c.c_exact;
    add_use(m, work, call.workspace, c.workspace_address, c.workspace_bytes, recorded, Access::Write);
}

// Work in launch order (stable: equal times keep load order); pointer uses follow their items. The
// items are moved in place along the permutation's cycles: a sorted copy of the work list would
// double the model's largest array at its peak.
void sort_work_by_launch(TraceModel& m) {
    const auto before = [](const WorkItem& a, const WorkItem& b) { return a.launch_ns < b.launch_ns; };
    if (std::is_sorted(m.work.begin(), m.work.end(), before)) return;
    // Positions only (4 bytes an item): the list is a few runs sorted already (kernels, copies, sets),
    // which a merge sort joins cheaply.
    std::vector<uint32_t> order(m.work.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return m.work[a].launch_ns < m.work[b].launch_ns; });
    if (!m.pointer_uses.empty()) {
        std::vector<uint32_t> position(order.size());
        for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<uint32_t>(i);
        for (PointerUse& u : m.pointer_uses) u.work = position[u.work];
    }
    // Slot i receives the item loaded at order[i]; a slot done is marked order[i] == i.
    for (uint32_t i = 0; i < order.size(); ++i) {
        if (order[i] == i) continue;
        WorkItem first = std::move(m.work[i]);
        uint32_t slot = i;
        while (order[slot] != i) {
            const uint32_t from = order[slot];
            m.work[slot] = std::move(m.work[from]);
            order[slot] = slot;
            slot = from;
        }
        m.work[slot] = std::move(first);
        order[slot] = slot;
    }
}

int64_t rows_in(const trace::Database& db, const char* table) {
    return trace::has_table(db, table) ? db.query_int((std::string("SELECT count(*) FROM ") + table).c_str()) : 0;
}

// The math library a module file belongs to, among those that take workspaces (cuBLAS, cuBLASLt,
// cuDNN: their own memory is workspace); empty: none of them.
std::string_view math_library_of(std::string_view module) {
    const std::string_view library = trace::library_of_module(module);
    return library == "cuBLAS" || library == "cuBLASLt" || library == "cuDNN" ? library : std::string_view{};
}

bool handle_creation(std::string_view symbol) {
    return symbol.starts_with("cublasCreate") || symbol.starts_with("cublasLtCreate") ||
           symbol.starts_with("cudnnCreate");
}

// Who made an allocation, by its stack (innermost first): a math library when the first frame past
// the CUDA runtime and driver lies in one (the library called the allocator itself, as cublasCreate
// does on the real GPU, five frames deep inside libcublas), with the outermost named frame of that
// run of the library's frames as its entry point. A stack without modules still names the
// library by a handle-creation symbol among its innermost frames.
LibraryMade library_made(const std::vector<trace::StackFrame>& frames) {
    LibraryMade made;
    size_t f = 0;
    while (f < frames.size() && trace::cuda_runtime_module(frames[f].module)) ++f;
    const std::string_view library = f < frames.size() ? math_library_of(frames[f].module) : std::string_view{};
    if (!library.empty()) {
        made.library = library;
        for (; f < frames.size() && math_library_of(frames[f].module) == library; ++f)
            if (!frames[f].symbol.empty()) made.entry_point = frames[f].symbol;
        return made;
    }
    for (size_t i = 0; i < std::min<size_t>(frames.size(), 4); ++i) {
        if (!handle_creation(frames[i].symbol)) continue;
        made.entry_point = frames[i].symbol;
        made.library = frames[i].symbol.starts_with("cudnn")      ? "cuDNN"
                       : frames[i].symbol.starts_with("cublasLt") ? "cuBLASLt"
                                                                  : "cuBLAS";
        break;
    }
    return made;
}

// Allocations a math library made for itself (cuBLAS's handle state and default workspace,
// allocated inside cublasCreate; cuDNN's inside cudnnCreate), by their call stacks.
void mark_library_handle_allocations(const trace::Database& db, TraceModel& m) {
    std::unordered_map<int64_t, LibraryMade> by_stack;
    for (Allocation& a : m.allocations) {
        if (a.stack == 0) continue;
        auto [it, added] = by_stack.try_emplace(a.stack);
        if (added) it->second = library_made(trace::read_stack(db, a.stack));
        a.made_by_library_handle = !it->second.library.empty();
        if (a.made_by_library_handle) a.made_by = it->second;
    }
}

// An NCCL call as loading sees it: which calls make up a group (nccl_groups).
struct NcclCallRow {
    int64_t id = 0, process = 0, thread = -1, begin_ns = 0;
    bool group_end = false;
};

// What loading keeps from one table to the next: trace ids to model indices, and which tables
// carry the builder's resolved operands.
struct Loader {
    const trace::Database& db;
    TraceModel& m;
    std::unordered_map<int64_t, int32_t> alloc_index = {};
    std::unordered_map<int64_t, uint64_t> offset_in_segment = {};  // joined mappings (mapped_segments.h)
    IdIndex call_index = {}, kernel_index = {};
    bool calls_resolved = false, copies_resolved = false, sets_resolved = false;
    std::vector<NcclCallRow> nccl_calls = {};
    // Per ncclGroupEnd call (model index) whose group's calls its kernels ran: those calls.
    std::unordered_map<int32_t, std::vector<int32_t>> group_members = {};
    // Per PointerUse::slot: whether the word lies inside a by-value aggregate (word_reads.h).
    std::vector<bool> aggregate_words = {};
    // Pooled traces: the library calls' kernels' pointers (unrecorded_operands.h).
    std::vector<LibraryKernelPointer> library_kernel_pointers = {};

    // Copies, sets and library calls point into allocations through the builder's columns (the one
    // resolution); a trace without them (older, imported) has these operands unresolved, as kernels
    // without edges are. kNone: in no allocation, or not in device memory.
    int32_t index_of(const OptionalInt& allocation) const {
        auto found = allocation ? alloc_index.find(*allocation) : alloc_index.end();
        return found == alloc_index.end() ? kNone : found->second;
    }
};

void load_allocations(Loader& l, const std::vector<trace::AllocationRow>* written) {
    TraceModel& m = l.m;
    std::vector<Allocation> mapped;
    const auto add = [&](const trace::AllocationRow& r) {
        if (!trace::is_device_memory(r.kind)) return;
        auto& to = r.kind == trace::MemoryKind::device_mapped ? mapped : m.allocations;
        to.push_back({.id = r.id,
                      .process = int32_t(r.process),
                      .address = uint64_t(r.address),
                      .bytes = r.bytes,
                      .alloc_ns = r.alloc_ns,
                      .free_ns = r.free_ns,
                      .stack = r.stack.value_or(0)});
    };
    if (written) {
        for (const trace::AllocationRow& r : *written) add(r);
    } else {
        trace::AllocationRow r;
        // No tag texts: the tags are about to be replaced (and the ones read here are not used).
        for (trace::RowReader<trace::AllocationRow> rows(l.db, {.tag_texts = false}); rows.next(r);) add(r);
    }
    join_mapped_ranges(std::move(mapped), m.allocations, l.offset_in_segment);
    // In allocation order (ties by id); ids follow it in what the builder writes, so rarely sorted.
    sort_by(m.allocations, &Allocation::alloc_ns);
    for (size_t i = 0; i < m.allocations.size(); ++i) {
        l.alloc_index[m.allocations[i].id] = static_cast<int32_t>(i);
        for (const MappedPiece& piece : m.allocations[i].pieces) l.alloc_index[piece.id] = static_cast<int32_t>(i);
    }
}

// Library calls, read in id order, in the order they began (ties keep id order); `ids` follow them.
// The model keeps no ids (8 bytes a call): loading maps them to indices (Loader::call_index).
void sort_calls_by_begin(std::vector<LibraryCall>& calls, std::vector<int64_t>& ids) {
    const auto before = [](const LibraryCall& a, const LibraryCall& b) { return a.begin_ns < b.begin_ns; };
    if (std::is_sorted(calls.begin(), calls.end(), before)) return;
    std::vector<uint32_t> order(calls.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return before(calls[a], calls[b]); });
    std::vector<LibraryCall> sorted_calls;
    std::vector<int64_t> sorted_ids;
    sorted_calls.reserve(calls.size());
    sorted_ids.reserve(ids.size());
    for (uint32_t i : order) sorted_calls.push_back(calls[i]), sorted_ids.push_back(ids[i]);
    calls = std::move(sorted_calls);
    ids = std::move(sorted_ids);
}

void load_library_calls(Loader& l) {
    TraceModel& m = l.m;
    const auto count = static_cast<size_t>(rows_in(l.db, "library_calls"));
    m.library_calls.reserve(count);
    std::vector<int64_t> ids;
    ids.reserve(count);
    trace::LibraryCallRow r;
    for (trace::RowReader<trace::LibraryCallRow> rows(l.db); rows.next(r);) {
        LibraryCall c{.begin_ns = r.begin_ns,
                      .end_ns = r.end_ns,
                      .process = int32_t(r.process),
                      .a = l.index_of(r.a_allocation),
                      .b = l.index_of(r.b_allocation),
                      .c = l.index_of(r.c_allocation),
                      .workspace = l.index_of(r.workspace_allocation)};
        drop_empty_workspace(r, c);
        c.output_read = r.op == "axpy" || r.op == "scal" || r.op == "ger";
        c.collective = collective_of(r.op);
        if (r.op.starts_with("nccl_"))
            l.nccl_calls.push_back({r.id, r.process, r.thread.value_or(-1), r.begin_ns, r.op == "nccl_group_end"});
        m.library_calls.push_back(c);
        ids.push_back(r.id);
    }
    m.operands_unresolved |= !l.calls_resolved && !m.library_calls.empty();
    sort_calls_by_begin(m.library_calls, ids);
    for (int64_t id : ids) l.call_index.add(id);
    l.call_index.finish();
}

void load_kernels(Loader& l, const std::vector<trace::KernelLaunch>* written) {
    const auto add = [&](const trace::KernelLaunch& k) {
        WorkItem w;
        w.process = static_cast<int32_t>(k.process);
        w.launch_ns = k.start_ns - k.queued_ns;
        w.start_ns = k.start_ns;
        w.end_ns = k.start_ns + k.duration_ns;
        w.function = static_cast<int32_t>(k.function);
        if (k.library_call != -1) {
            if (const std::optional<size_t> call = l.call_index.find(k.library_call)) w.library_call = int32_t(*call);
        }
        l.kernel_index.add(k.id);
        l.m.work.push_back(std::move(w));
    };
    if (written) {
        for (const trace::KernelLaunch& k : *written) add(k);
    } else {
        trace::for_each_kernel_launch(l.db, add);
    }
    l.kernel_index.finish();
}

// NCCL launches nothing for the calls between ncclGroupStart and ncclGroupEnd: their kernel (one
// per communicator) is launched inside the outermost ncclGroupEnd and points to that call, which has
// no operands, so the buffers the group sent, received or reduced would be touched by nothing. The
// group's calls are the NCCL calls of the same thread since the last call that launched a kernel
// (an ungrouped call, or an earlier group's end), themselves launching none; an inner group's end
// launches nothing either and leaves the group open. A group of one call (frameworks issue single
// collectives in a group) gives its kernel to that call, whose collective rules then apply; a
// kernel of a larger group touches every call's operands (apply_library_roles).
void resolve_nccl_groups(Loader& l) {
    if (l.nccl_calls.empty()) return;
    std::vector<bool> launched(l.m.library_calls.size(), false);
    for (const WorkItem& w : l.m.work)
        if (w.library_call != kNone) launched[size_t(w.library_call)] = true;
    auto key = [](const NcclCallRow& c) { return std::tie(c.process, c.thread, c.begin_ns, c.id); };
    std::sort(l.nccl_calls.begin(), l.nccl_calls.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    std::vector<int32_t> open;
    for (size_t i = 0; i < l.nccl_calls.size(); ++i) {
        const NcclCallRow& c = l.nccl_calls[i];
        if (i > 0 && (c.process != l.nccl_calls[i - 1].process || c.thread != l.nccl_calls[i - 1].thread)) open.clear();
        const std::optional<size_t> call = l.call_index.find(c.id);
        if (!call) continue;
        if (launched[*call]) {
            if (c.group_end && !open.empty()) l.group_members[int32_t(*call)] = open;
            open.clear();
        } else if (!c.group_end) {
            open.push_back(int32_t(*call));
        }
    }
    for (WorkItem& w : l.m.work) {
        auto group = l.group_members.find(w.library_call);
        if (group != l.group_members.end() && group->second.size() == 1) w.library_call = group->second.front();
    }
}

// A pointer a kernel passed into an allocation (kernel_edges), at `offset` from its start.
struct Edge {
    size_t work;
    int32_t allocation;
    uint64_t offset;
    Access access;
    uint32_t slot;  // PointerUse::slot
};

// Every pointer a plain kernel passed into an allocation, one use per (kernel, allocation, offset):
// pooled traces keep them (sub-ranges), others drop them once word_reads.h has read them. Library
// kernels are skipped: their operands come from the library call; their pointers go to `library`
// (unrecorded_operands.h), once each.
void add_kernel_pointer_uses(TraceModel& m, std::vector<Edge>& edges, std::vector<LibraryKernelPointer>& library) {
    const auto key = [](const Edge& e) { return std::tie(e.work, e.allocation, e.offset); };
    std::stable_sort(edges.begin(), edges.end(), [&](const Edge& x, const Edge& y) { return key(x) < key(y); });
    for (size_t i = 0; i < edges.size(); ++i) {
        const Edge& e = edges[i];
        if (e.offset >= uint64_t(std::max<int64_t>(m.allocations[size_t(e.allocation)].bytes, 1))) continue;
        if (m.work[e.work].library_call != kNone) {
            if (m.pooled && (i == 0 || key(edges[i - 1]) != key(e)))
                library.push_back({uint32_t(e.work), e.allocation, e.offset, e.access});
            continue;
        }
        if (i > 0 && key(edges[i - 1]) == key(e)) {  // the same pointer in another argument
            PointerUse& use = m.pointer_uses.back();
            if (e.access == Access::Write) use.access = Access::Write;
            if (use.slot != kSeveralSlots) {  // its list is the last one: the words of one use are adjacent
                use.several_at = static_cast<uint32_t>(m.several_word_slots.size());
                m.several_word_slots.insert(m.several_word_slots.end(), {1, use.slot});
                use.slot = kSeveralSlots;
            }
            ++m.several_word_slots[use.several_at];
            m.several_word_slots.push_back(e.slot);
            continue;
        }
        m.pointer_uses.push_back(
            {static_cast<uint32_t>(e.work), e.allocation, e.offset, 0, false, e.access, {}, e.slot});
    }
}

// A library handle's own allocation (made inside cublasCreate) is reached by that library's kernels
// only: the library never hands its address out. A kernel launched outside every library call that
// seems to pass a pointer into it passes a stale word: an argument's unfilled bytes hold whatever the
// host stack held before (the unused slots of the tensor list PyTorch's multi_tensor_apply passes by
// value held addresses, some odd, that the simulated cuBLAS had left there, in some runs only).
bool stale_handle_pointer(const TraceModel& m, size_t work, int32_t allocation) {
    return m.allocations[size_t(allocation)].made_by_library_handle && m.work[work].library_call == kNone;
}

void load_kernel_edges(Loader& l) {
    TraceModel& m = l.m;
    // A mangled name says which pointer parameters are const; an extern "C" name says nothing.
    std::unordered_map<int64_t, bool> function_mangled;
    for (const auto& [id, name] : trace::read_function_names(l.db, true))
        function_mangled[id] = name.rfind("_Z", 0) == 0;
    std::vector<Edge> edges;
    std::unordered_map<int32_t, std::vector<uint64_t>> offsets;  // few per allocation unless pooled
    std::unordered_map<uint64_t, uint32_t> slots;                // (function, parameter, byte offset in it) -> slot id
    AggregateWords aggregates;
    trace::KernelEdgeRow r;
    for (trace::RowReader<trace::KernelEdgeRow> rows(l.db); rows.next(r);) {
        const std::optional<size_t> k = l.kernel_index.find(r.kernel);
        auto a = l.alloc_index.find(r.allocation);
        if (!k || a == l.alloc_index.end()) continue;
        m.has_argument_info = true;
        if (stale_handle_pointer(m, *k, a->second)) continue;
        auto offset = static_cast<uint64_t>(r.offset);
        if (auto piece = l.offset_in_segment.find(r.allocation); piece != l.offset_in_segment.end())
            offset += piece->second;  // the trace's offset is from the mapping, ours from the segment
        auto& seen = offsets[a->second];
        if (seen.size() < kPooledOffsets && std::find(seen.begin(), seen.end(), offset) == seen.end())
            seen.push_back(offset);
        const Access access = r.read_only                             ? Access::Read
                              : function_mangled[m.work[*k].function] ? Access::Write
                                                                      : Access::Unknown;
        const uint64_t word =
            (uint64_t(uint32_t(m.work[*k].function)) << 32) ^ (uint64_t(r.param) << 20) ^ uint64_t(r.param_word);
        auto slot = slots.try_emplace(word, uint32_t(slots.size())).first;
        aggregates.add(r, slot->second);
        edges.push_back({*k, a->second, offset, access, slot->second});
        auto& touches = m.work[*k].touches;
        auto same =
            std::find_if(touches.begin(), touches.end(), [&](const Touch& t) { return t.allocation == a->second; });
        if (same == touches.end())
            touches.push_back({a->second, access});
        else if (access == Access::Write)
            same->access = Access::Write;
    }
    for (const auto& [index, seen] : offsets) {
        m.allocations[size_t(index)].distinct_offsets = static_cast<uint32_t>(seen.size());
        m.pooled |= seen.size() >= kPooledOffsets;
    }
    m.kernel_slots = static_cast<uint32_t>(slots.size());
    l.aggregate_words = aggregates.finish(slots.size());
    // Unpooled traces keep them only until the reads through writable words are marked (word_reads.h).
    add_kernel_pointer_uses(m, edges, l.library_kernel_pointers);
}

// Pooled traces: each library call's operands, by model index, read in a second pass over the
// table (the model keeps no addresses per call; other traces need none).
std::vector<CallOperands> load_call_operands(const Loader& l) {
    std::vector<CallOperands> operands(l.m.library_calls.size());
    trace::LibraryCallRow r;
    for (trace::RowReader<trace::LibraryCallRow> rows(l.db); rows.next(r);)
        if (const std::optional<size_t> call = l.call_index.find(r.id)) operands[*call] = call_operands(r);
    return operands;
}

// Pooled traces: which operands of its library call each pointer use of a library call's work is
// (from the call itself, from library_operands, or both at one address).
void mark_call_operands(TraceModel& m, const std::vector<CallOperands>& operands) {
    for (PointerUse& u : m.pointer_uses) {
        const int32_t call = m.work[u.work].library_call;
        if (call == kNone) continue;
        const uint64_t address = m.allocations[size_t(u.allocation)].address + u.offset;
        u.operand_of_call =
            operand_of_call(m.library_calls[size_t(call)], operands[size_t(call)], u.allocation, address);
    }
}

// A library call's operands as touches of its kernel: A and B read, C and the workspace written.
void add_call_touches(WorkItem& w, const LibraryCall& c) {
    if (c.a != kNone) w.touches.push_back({c.a, Access::Read});
    if (c.b != kNone && c.b != c.a) w.touches.push_back({c.b, Access::Read});
    if (c.c != kNone) w.touches.push_back({c.c, Access::Write});
    if (c.workspace != kNone) w.touches.push_back({c.workspace, Access::Write});
}

// Library roles override what argument scanning could tell: a GEMM reads A and B, writes C.
void apply_library_roles(Loader& l) {
    TraceModel& m = l.m;
    const std::vector<CallOperands> operands =
        m.pooled && l.calls_resolved ? load_call_operands(l) : std::vector<CallOperands>{};
    for (auto& w : m.work) {
        if (w.library_call == kNone || !l.calls_resolved) continue;
        w.touches.clear();
        auto group = l.group_members.find(w.library_call);
        const std::vector<int32_t> own{w.library_call};
        for (int32_t call : group != l.group_members.end() ? group->second : own) {
            const LibraryCall& c = m.library_calls[size_t(call)];
            add_call_touches(w, c);
            if (m.pooled)
                add_library_pointer_uses(m, static_cast<uint32_t>(&w - m.work.data()), c, operands[size_t(call)]);
        }
    }
    if (l.calls_resolved) add_library_operand_touches(l.db, l.alloc_index, l.call_index, m);  // library_operands.h
    if (l.calls_resolved) add_unrecorded_operands(m, l.library_kernel_pointers);
    if (!operands.empty()) mark_call_operands(m, operands);
}

void load_copies(Loader& l) {
    TraceModel& m = l.m;
    trace::CopyRow r;
    for (trace::RowReader<trace::CopyRow> rows(l.db); rows.next(r);) {
        WorkItem w = timed_item(r, WorkItem::Kind::CopyDtoD);
        // A copy recorded as host-to-device or device-to-host has its host side on the host,
        // whatever device allocation the address may also fall in (on a simulated GPU, device
        // memory is host memory: a host buffer can lie inside a device reservation's range).
        // Without edges, the recorded direction is all there is.
        const bool htod = r.kind == trace::CopyKind::htod, dtoh = r.kind == trace::CopyKind::dtoh;
        const int32_t src = htod ? kNone : l.index_of(r.src_allocation);
        const int32_t dst = dtoh ? kNone : l.index_of(r.dst_allocation);
        const bool resolved = l.copies_resolved;
        const bool from_device = resolved ? src != kNone : dtoh || r.kind == trace::CopyKind::dtod;
        const bool to_device = resolved ? dst != kNone : htod || r.kind == trace::CopyKind::dtod;
        m.operands_unresolved |= !resolved && (r.src || r.dst);
        if (!from_device && !to_device) continue;  // host to host
        if (!from_device) w.kind = WorkItem::Kind::CopyHtoD;
        if (!to_device) w.kind = WorkItem::Kind::CopyDtoH;
        if (src != kNone) w.touches.push_back({src, Access::Read});
        if (dst != kNone) w.touches.push_back({dst, Access::Write});
        auto work = static_cast<uint32_t>(m.work.size());
        add_use(m, work, src, static_cast<uint64_t>(r.src.value_or(0)), r.bytes, true, Access::Read);
        add_use(m, work, dst, static_cast<uint64_t>(r.dst.value_or(0)), r.bytes, true, Access::Write);
        m.work.push_back(std::move(w));
    }
}

void load_sets(Loader& l) {
    TraceModel& m = l.m;
    trace::SetRow r;
    for (trace::RowReader<trace::SetRow> rows(l.db); rows.next(r);) {
        WorkItem w = timed_item(r, WorkItem::Kind::Set);
        const int32_t dst = l.index_of(r.dst_allocation);
        if (dst == kNone && l.sets_resolved) continue;
        if (dst != kNone) w.touches.push_back({dst, Access::Write});
        add_use(m, static_cast<uint32_t>(m.work.size()), dst, static_cast<uint64_t>(r.dst.value_or(0)), r.bytes, true,
                Access::Write);
        m.work.push_back(std::move(w));
    }
}

// Host waits for the device, capture windows and NVTX ranges (those last from the file unless the
// caller has them: load_model).
void load_host_ranges(const trace::Database& db, TraceModel& m, bool read_ranges,
                      const std::vector<trace::ApiCallRow>* written_calls) {
    const auto add = [&m](const trace::ApiCallRow& call) {
        if (call.kind == "device_sync" || call.kind == "stream_sync" || call.kind == "event_sync" ||
            call.kind == "implicit_sync")
            m.host_waits.push_back({static_cast<int32_t>(call.process), call.begin_ns, call.end_ns, {}});
    };
    if (written_calls) {
        for (const trace::ApiCallRow& call : *written_calls) add(call);
    } else {
        trace::ApiCallRow call;
        for (trace::RowReader<trace::ApiCallRow> rows(db, {.by_time = true}); rows.next(call);) add(call);
    }
    trace::CaptureWindowRow window;
    for (trace::RowReader<trace::CaptureWindowRow> rows(db); rows.next(window);)
        m.capture_windows.push_back(
            {static_cast<int32_t>(window.process), window.begin_ns, window.end_ns, std::string(window.reason)});
    if (!read_ranges) return;
    trace::RangeRow range;
    for (trace::RowReader<trace::RangeRow> rows(db); rows.next(range);)
        m.ranges.push_back({static_cast<int32_t>(range.process), range.begin_ns, range.end_ns.value_or(range.begin_ns),
                            std::string(range.name)});
}

// The run's end for memory never freed; 0 when the trace has no run row (unknown).
int64_t run_end_ns(const trace::Database& db) {
    if (!trace::has_table(db, "run") || db.query_int("SELECT count(*) FROM run") == 0) return 0;
    return trace::read_run(db).duration_ns;
}

}  // namespace

TraceModel load_model(const trace::Database& db, std::optional<WrittenRows> written) {
    TraceModel m;
    m.run_end_ns = run_end_ns(db);
    Loader l{db, m};
    load_allocations(l, written && written->allocations ? &*written->allocations : nullptr);
    mark_library_handle_allocations(db, m);
    load_registered_regions(db, l.alloc_index, m);  // nvtx_regions.cpp: sets m.pooled when there are any
    l.calls_resolved = trace::has_column(db, "library_calls", "a_allocation");
    l.copies_resolved = trace::has_column(db, "copies", "dst_allocation");
    l.sets_resolved = trace::has_column(db, "sets", "dst_allocation");
    load_library_calls(l);  // first: kernels refer to them
    // Sized once: growing by doubling would touch up to twice the memory, the largest array's.
    m.work.reserve(static_cast<size_t>(trace::kernel_count(db) + rows_in(db, "copies") + rows_in(db, "sets")));
    load_kernels(l, written && written->kernels ? &*written->kernels : nullptr);
    resolve_nccl_groups(l);
    const std::vector<bool> detached = detach_kernels_of_opaque_calls(db, l.call_index, l.calls_resolved, m);
    load_kernel_edges(l);
    apply_library_roles(l);
    load_copies(l);
    load_sets(l);
    drop_opaque_only_pointer_uses(detached, m);  // opaque_calls.h
    drop_echoed_words(m);                        // echoed_words.h: pooled traces
    sort_work_by_launch(m);
    mark_unpooled_reads_beside_output(m, l.aggregate_words);  // word_reads.h: needs the work in launch order
    if (m.pooled) m.aggregate_words = std::move(l.aggregate_words);
    if (written) m.ranges = std::move(written->ranges);
    load_host_ranges(db, m, !written, written && written->api_calls ? &*written->api_calls : nullptr);
    return m;
}

}  // namespace tbdprof::tagger
