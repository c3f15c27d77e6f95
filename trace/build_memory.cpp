// Model building: allocation stacks and frames, allocations with their frees, and the kernel ->
// allocation and operand -> allocation edges. Frees and edges come from one sweep over each process's
// allocs, frees, launches and operands in time order, keeping the live allocations in an
// address-ordered map: a pointer belongs to the live allocation whose [address, address + bytes)
// contains it when the host launched or enqueued the work (the one resolution every stage uses).
#include "demangle.h"
#include "kernel_stage.h"
#include "model_builder.h"
#include "tbdprof/trace/memory_kinds.h"

#include <algorithm>
#include <cstdint>

namespace tbdprof::trace::detail {
namespace {

// The raw format's memory kinds as the trace names them (memory_kinds.h: one list of names).
std::string_view memory_kind_name(raw::MemoryKind kind) {
    switch (kind) {
        case raw::MemoryKind::Device: return trace::memory_kind_name(MemoryKind::device);
        case raw::MemoryKind::DeviceAsync: return trace::memory_kind_name(MemoryKind::device_async);
        case raw::MemoryKind::PinnedHost: return trace::memory_kind_name(MemoryKind::pinned_host);
        case raw::MemoryKind::Managed: return trace::memory_kind_name(MemoryKind::managed);
        case raw::MemoryKind::DeviceMapped:
            return trace::memory_kind_name(MemoryKind::device_mapped);
    }
    return trace::memory_kind_name(MemoryKind::unknown);
}

// Replay: a kernel a graph replay ran, with its captured launch's candidates, at the replay's time.
enum class SweepKind : uint8_t { Alloc, Launch, Free, Replay };

struct SweepEvent {
    uint64_t host_ns;
    uint64_t file_offset;  // file order breaks ties: it is the order the thread did things in
    SweepKind kind;
    uint32_t index;
};

// An address operand of a copy, set or library call, at the host time the work was enqueued (a copy's
// or set's device start less its queue time; a library call's begin), and the row's column for the
// allocation it falls in.
struct Operand {
    uint64_t host_ns, address;
    Opt* allocation;
};

std::vector<Operand> operands_of(TraceModel& m, int64_t process, uint64_t run_start) {
    std::vector<Operand> out;
    auto add = [&](int64_t trace_ns, Opt address, Opt& allocation) {
        if (address.value_or(0) != 0)
            out.push_back({run_start + static_cast<uint64_t>(trace_ns), static_cast<uint64_t>(*address), &allocation});
    };
    for (CopyRow& c : m.copies) {
        if (c.process != process) continue;
        add(c.start_ns - c.queued_ns.value_or(0), c.src, c.src_allocation);
        add(c.start_ns - c.queued_ns.value_or(0), c.dst, c.dst_allocation);
    }
    for (SetRow& s : m.sets)
        if (s.process == process) add(s.start_ns - s.queued_ns.value_or(0), s.dst, s.dst_allocation);
    for (LibraryCallRow& l : m.library_calls) {
        if (l.process != process) continue;
        add(l.begin_ns, l.a, l.a_allocation);
        add(l.begin_ns, l.b, l.b_allocation);
        add(l.begin_ns, l.c, l.c_allocation);
        add(l.begin_ns, l.workspace, l.workspace_allocation);
    }
    // Extra operands are in call order, each call's begin time is its row's (ids start at 1).
    for (LibraryOperandRow& o : m.library_operands)
        if (o.process == process) add(m.library_calls[size_t(o.library_call - 1)].begin_ns, o.address, o.allocation);
    std::stable_sort(out.begin(), out.end(), [](const Operand& a, const Operand& b) { return a.host_ns < b.host_ns; });
    return out;
}

}  // namespace

void ModelBuilder::build_stacks_and_frames() {
    for (ProcessContext& p : contexts_) {
        const RawProcess& raw = *p.raw;
        for (const raw::RawFrame& f : raw.frames) {
            const auto key = std::make_pair(p.id, f.ip);
            if (frame_ids_.count(key)) continue;
            const int64_t id = static_cast<int64_t>(model_.frames.size()) + 1;
            FrameRow row{id, p.id, static_cast<int64_t>(f.ip), std::nullopt, std::nullopt,
                         static_cast<int64_t>(f.offset)};
            if (f.symbol_string != 0) row.symbol = string_id(p, f.symbol_string);
            if (f.module_string != 0) row.module = string_id(p, f.module_string);
            if (!row.symbol && f.module_string != 0) {
                // Static functions: the process could not name them, the object file can.
                const std::string module(p.raw->string(f.module_string));
                if (auto name = symbolizer_.function_at(module, f.offset)) row.symbol = model_.strings.intern(demangle(*name));
            }
            model_.frames.push_back(row);
            frame_ids_.emplace(key, id);
        }
        for (const StackEvent& s : raw.stacks) {
            if (p.stack_ids.count(s.id)) continue;
            const int64_t id = static_cast<int64_t>(model_.stacks.size()) + 1;
            model_.stacks.push_back({id, p.id, s.depth});
            p.stack_ids.emplace(s.id, id);
            for (uint32_t i = 0; i < s.depth; ++i) {
                const uint64_t ip = raw.stack_ips[s.first_ip + i];
                auto [it, inserted] = frame_ids_.try_emplace(std::make_pair(p.id, ip),
                                                             static_cast<int64_t>(model_.frames.size()) + 1);
                if (inserted) {  // an ip the collector did not symbolize
                    model_.frames.push_back({it->second, p.id, static_cast<int64_t>(ip), std::nullopt, std::nullopt,
                                             std::nullopt});
                }
                model_.stack_frames.push_back({id, i, it->second});
            }
        }
        counters_.events += raw.frames.size() + raw.stacks.size();
    }
}

namespace {

// One process's allocs, frees, launches with pointer candidates and graph-replayed kernels, in the
// order the sweep visits them (time, then the order the thread did things in).
std::vector<SweepEvent> sweep_events(const RawProcess& raw, const ProcessContext& p) {
    std::vector<SweepEvent> events;
    events.reserve(raw.allocs.size() + raw.frees.size() + raw.launches.size());
    for (uint32_t i = 0; i < raw.allocs.size(); ++i)
        events.push_back({raw.allocs[i].record.host_ns, raw.allocs[i].file_offset, SweepKind::Alloc, i});
    for (uint32_t i = 0; i < raw.frees.size(); ++i)
        events.push_back({raw.frees[i].record.host_ns, raw.frees[i].file_offset, SweepKind::Free, i});
    for (uint32_t i = 0; i < raw.launches.size(); ++i) {
        const LaunchEvent l = raw.launches[i];  // decoded from the file: once
        if (l.record.candidate_count > 0 && l.record.captured == 0)
            events.push_back({l.record.host_ns, l.file_offset, SweepKind::Launch, i});
    }
    const auto launches_end = events.size();
    for (uint32_t i = 0; i < p.replayed_kernels.size(); ++i) {
        const auto& r = p.replayed_kernels[i];
        if (r.template_launch >= 0 && r.kernel != 0) events.push_back({r.host_ns, r.file_offset, SweepKind::Replay, i});
    }
    // Three lists, each usually in order already (a thread records in time order): sort only
    // those that are not, then merge them in linear time.
    const auto before = [](const SweepEvent& a, const SweepEvent& b) {
        return a.host_ns != b.host_ns ? a.host_ns < b.host_ns : a.file_offset < b.file_offset;
    };
    const auto allocs_end = events.begin() + static_cast<std::ptrdiff_t>(raw.allocs.size());
    const auto frees_end = allocs_end + static_cast<std::ptrdiff_t>(raw.frees.size());
    const auto replays_begin = events.begin() + static_cast<std::ptrdiff_t>(launches_end);
    for (auto [first, last] : {std::pair{events.begin(), allocs_end}, std::pair{allocs_end, frees_end},
                               std::pair{frees_end, replays_begin}, std::pair{replays_begin, events.end()}})
        if (!std::is_sorted(first, last, before)) std::sort(first, last, before);
    std::inplace_merge(frees_end, replays_begin, events.end(), before);
    std::inplace_merge(events.begin(), allocs_end, frees_end, before);
    std::inplace_merge(events.begin(), frees_end, events.end(), before);
    return events;
}

using LiveAllocations = std::map<uint64_t, AllocationRow*>;  // address -> allocation

// Operands go after the allocations and before the frees of their nanosecond. A pointer into an
// allocation nested in another (on the simulated GPU a host buffer can lie inside a device
// reservation) belongs to the innermost that contains it.
class OperandResolver {
public:
    explicit OperandResolver(std::vector<Operand> operands) : operands_(std::move(operands)) {}

    // Resolves the operands before `host_ns` (and at it when `at_too`) against the allocations live now.
    void resolve_until(uint64_t host_ns, bool at_too, const LiveAllocations& live) {
        for (; next_ < operands_.size() &&
               (operands_[next_].host_ns < host_ns || (at_too && operands_[next_].host_ns == host_ns));
             ++next_) {
            const Operand& o = operands_[next_];
            auto it = live.upper_bound(o.address);
            for (int below = 0; it != live.begin() && below < 64; ++below) {
                --it;
                if (o.address - it->first >= static_cast<uint64_t>(std::max<int64_t>(it->second->bytes, 1))) continue;
                *o.allocation = it->second->id;
                break;
            }
        }
    }

private:
    std::vector<Operand> operands_;
    size_t next_ = 0;
};

// Kernel -> allocation edges of a launch (or a graph replay of a captured launch): each pointer
// candidate that falls inside a live allocation.
void add_kernel_edges(const ProcessContext& p, const SweepEvent& e, const LiveAllocations& live, KernelStage& edges) {
    const RawProcess& raw = *p.raw;
    const auto* r = e.kind == SweepKind::Replay ? &p.replayed_kernels[e.index] : nullptr;
    const LaunchEvent l = raw.launches[r ? static_cast<size_t>(r->template_launch) : e.index];
    const int64_t kernel = r ? r->kernel : p.kernel_of_launch[e.index];
    if (kernel == 0) return;
    for (uint32_t c = 0; c < l.record.candidate_count; ++c) {
        const raw::RawPointerCandidate candidate = l.candidate(c);
        auto it = live.upper_bound(candidate.value);
        if (it == live.begin()) continue;
        --it;
        const AllocationRow& a = *it->second;
        if (candidate.value - it->first >= static_cast<uint64_t>(a.bytes)) continue;
        edges.add_edge({.kernel = kernel,
                        .allocation = a.id,
                        .offset = static_cast<int64_t>(candidate.value - it->first),
                        .param = candidate.param_index,
                        .param_word = candidate.param_offset,
                        .read_only = static_cast<uint8_t>(candidate.read_only != 0 ? 1 : 0)});
    }
}

}  // namespace

// Allocation ids follow allocation time across all processes.
void ModelBuilder::number_allocations() {
    struct Ref {
        uint64_t host_ns;
        int64_t process;
        uint64_t file_offset;
        ProcessContext* p;
        uint32_t index;
    };
    std::vector<Ref> order;
    for (ProcessContext& p : contexts_) {
        p.allocation_ids.assign(p.raw->allocs.size(), 0);
        for (uint32_t i = 0; i < p.raw->allocs.size(); ++i) {
            const auto& a = p.raw->allocs[i];
            order.push_back({a.record.host_ns, p.id, a.file_offset, &p, i});
        }
    }
    std::sort(order.begin(), order.end(), [](const Ref& a, const Ref& b) {
        if (a.host_ns != b.host_ns) return a.host_ns < b.host_ns;
        if (a.process != b.process) return a.process < b.process;
        return a.file_offset < b.file_offset;
    });
    model_.allocations.reserve(order.size());
    for (const Ref& ref : order) {
        ProcessContext& p = *ref.p;
        const auto& a = p.raw->allocs[ref.index];
        AllocationRow row;
        row.id = static_cast<int64_t>(model_.allocations.size()) + 1;
        row.process = p.id;
        row.thread = thread_id(p, a.tid);
        row.device = a.record.device;
        row.address = static_cast<int64_t>(a.record.address);
        row.bytes = static_cast<int64_t>(a.record.bytes);
        row.alloc_ns = rel(a.record.host_ns);
        row.kind = memory_kind_name(a.record.memory_kind);
        row.api = api_name_of(a.record.api);
        if (a.record.stream != 0 || a.record.memory_kind == raw::MemoryKind::DeviceAsync)
            row.stream = static_cast<int64_t>(a.record.stream);
        if (a.record.stack_id != 0) {
            if (auto s = p.stack_ids.find(a.record.stack_id); s != p.stack_ids.end()) row.stack = s->second;
        }
        p.allocation_ids[ref.index] = row.id;
        model_.allocations.push_back(row);
    }
}

// One process's sweep: frees matched to the live allocation at their address, kernel edges and
// operand allocations resolved against the allocations live when the host did the work.
void ModelBuilder::sweep_allocations(ProcessContext& p) {
    const RawProcess& raw = *p.raw;
    LiveAllocations live;
    OperandResolver operands(operands_of(model_, p.id, run_start_));
    for (const SweepEvent& e : sweep_events(raw, p)) {
        operands.resolve_until(e.host_ns, e.kind != SweepKind::Alloc, live);
        switch (e.kind) {
            case SweepKind::Alloc: {
                AllocationRow* row = &model_.allocations[static_cast<size_t>(p.allocation_ids[e.index] - 1)];
                auto [it, inserted] = live.try_emplace(static_cast<uint64_t>(row->address), row);
                if (!inserted) {  // the free of the previous one was not recorded
                    it->second = row;
                    ++counters_.reused_addresses;
                }
                break;
            }
            case SweepKind::Free: {
                const auto& f = raw.frees[e.index];
                if (f.record.address == 0) break;  // cudaFree(0) and friends free nothing
                auto it = live.find(f.record.address);
                if (it == live.end()) {
                    ++counters_.unmatched_frees;
                    break;
                }
                it->second->free_ns = rel(f.record.host_ns);
                it->second->free_thread = thread_id(p, f.tid);
                live.erase(it);
                break;
            }
            case SweepKind::Launch:
            case SweepKind::Replay:
                add_kernel_edges(p, e, live, *model_.kernel_stage);
                break;
        }
    }
    operands.resolve_until(UINT64_MAX, true, live);
    counters_.events += raw.allocs.size() + raw.frees.size();
}

void ModelBuilder::build_allocations_and_edges() {
    number_allocations();
    // Edges go to the kernel stage as the sweep finds them; it keeps them in key order, one per key.
    for (ProcessContext& p : contexts_) {
        sweep_allocations(p);
        // The launches and their pointer candidates were last read by the sweep.
        p.raw->launches.release();
        release(p.kernel_of_launch);
    }
}

}  // namespace tbdprof::trace::detail
