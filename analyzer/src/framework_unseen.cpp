// Device memory a framework's own tools cannot see: what lies outside its allocator's pools, and the
// library workspaces it hands out of them that no tensor owns. Definitions in docs/analyzer.md,
// "Memory the framework cannot see". Reads the trace only; needs the memory scan's peak moment.
#include "framework_unseen.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <unordered_map>

#include "kernel_range_scan.h"  // add_saturating
#include "tbdprof/trace/library_modules.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

using trace::OptionalInt;

constexpr int64_t kMaxAllocationBytes = int64_t{1} << 50;  // as memory_scan.cpp: larger rows are damage

bool device_memory(trace::MemoryKind kind) {
    return kind == trace::MemoryKind::device || kind == trace::MemoryKind::device_async ||
           kind == trace::MemoryKind::managed;
}

// Live at the peak moment by the memory scan's rule: allocated at or before it, freed after it.
bool live_at(int64_t alloc_ns, const OptionalInt& free_ns, int64_t trace_ns) {
    return alloc_ns <= trace_ns && (!free_ns || *free_ns > trace_ns) && !(free_ns && *free_ns == alloc_ns);
}

// The library a call belongs to, by its name (cublasLtMatmul -> cuBLASLt).
std::string library_of_call(std::string_view name) {
    if (name.starts_with("cublasLt")) return "cuBLASLt";
    if (name.starts_with("cublas")) return "cuBLAS";
    if (name.starts_with("cudnn")) return "cuDNN";
    if (name.starts_with("nccl")) return "NCCL";
    return std::string(name.substr(0, name.find_first_of("_(")));
}

using Allocation = UnseenAllocation;

// PyTorch's caching allocator asks the driver for segments of 2 MiB and more; with its
// cudaMallocAsync backend every tensor is a stream-ordered allocation of any size. Only those are
// looked up by stack, so a C++ run with many small allocations does not read every stack.
constexpr int64_t kSmallestSegmentBytes = int64_t{2} << 20;

struct Call {
    int64_t process = 0, thread = 0, begin_ns = 0, end_ns = 0;
    std::string library;
};

struct WorkspaceRange {
    int64_t first_trace_ns = 0, last_trace_ns = 0, segment = 0;
};

struct Facts {
    std::vector<Allocation> allocations;
    std::set<int64_t> subrange_owners, registered;     // tagger's sub-ranges; NVTX heaps and regions
    std::map<int64_t, std::string> workspace_library;  // allocations library calls used as workspace
    std::vector<Call> calls;                           // with a thread, sorted by (process, thread, begin)
    // Each call's workspace: ((address, bytes), its span and allocation); filtered by pool later.
    std::vector<std::pair<std::pair<int64_t, int64_t>, WorkspaceRange>> workspace_uses;
};

void read_pool_marks(const trace::Database& db, Facts& facts) {
    trace::RowReader<trace::SubrangeRow> subranges(db, {.tag_texts = false});
    trace::SubrangeRow sub;
    while (subranges.next(sub)) facts.subrange_owners.insert(sub.allocation);
    trace::RowReader<trace::MemoryHeapRow> heaps(db);
    trace::MemoryHeapRow heap;
    while (heaps.next(heap))
        if (heap.allocation) facts.registered.insert(*heap.allocation);
    trace::RowReader<trace::MemoryRegionRow> regions(db);
    trace::MemoryRegionRow region;
    while (regions.next(region))
        if (region.allocation) facts.registered.insert(*region.allocation);
}

void read_library_calls(const trace::Database& db, Facts& facts) {
    trace::RowReader<trace::LibraryCallRow> reader(db);
    trace::LibraryCallRow row;
    while (reader.next(row)) {
        const std::string library = library_of_call(row.name);
        if (row.thread) facts.calls.push_back({row.process, *row.thread, row.begin_ns, row.end_ns, library});
        if (!row.workspace_allocation) continue;
        facts.workspace_library.emplace(*row.workspace_allocation, library);
        // A workspace larger than any allocation, or reaching past the address space, is damage.
        if (row.workspace && row.workspace_bytes && *row.workspace_bytes > 0 &&
            *row.workspace_bytes <= kMaxAllocationBytes && *row.workspace >= 0 &&
            *row.workspace <= INT64_MAX - *row.workspace_bytes)
            facts.workspace_uses.push_back(
                {{*row.workspace, *row.workspace_bytes}, {row.begin_ns, row.end_ns, *row.workspace_allocation}});
    }
    std::sort(facts.calls.begin(), facts.calls.end(), [](const Call& a, const Call& b) {
        return std::tie(a.process, a.thread, a.begin_ns) < std::tie(b.process, b.thread, b.begin_ns);
    });
}

// The library call running on the allocating thread when the allocation was made (the collector
// records calls whole, so an allocation inside one was made by the library); null when none.
const Call* enclosing_call(const Facts& facts, const Allocation& a) {
    const OptionalInt thread = a.thread();
    if (!thread) return nullptr;
    const Call key{a.process, *thread, a.alloc_ns, 0, {}};
    auto it = std::upper_bound(facts.calls.begin(), facts.calls.end(), key, [](const Call& x, const Call& y) {
        return std::tie(x.process, x.thread, x.begin_ns) < std::tie(y.process, y.thread, y.begin_ns);
    });
    if (it == facts.calls.begin()) return nullptr;
    --it;
    if (it->process != a.process || it->thread != *thread || it->end_ns < a.alloc_ns) return nullptr;
    return &*it;
}

// Libraries named by the frames of a stack (innermost first), cached per stack.
class StackLibraries {
public:
    explicit StackLibraries(const trace::Database& db) : db_(db) {}
    const std::vector<std::string>& of(const OptionalInt& stack) {
        static const std::vector<std::string> kNone;
        if (!stack) return kNone;
        auto [it, fresh] = cache_.try_emplace(*stack);
        if (fresh) {
            for (const trace::StackFrame& frame : trace::read_stack(db_, *stack)) {
                std::string library(trace::library_of_module(frame.module));
                if (!library.empty() && std::find(it->second.begin(), it->second.end(), library) == it->second.end())
                    it->second.push_back(std::move(library));
            }
        }
        return it->second;
    }

private:
    const trace::Database& db_;
    std::unordered_map<int64_t, std::vector<std::string>> cache_;
};

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

void add_source(UnseenMemoryItem& item, const std::string& source) {
    if (!source.empty() && !contains(item.sources, source)) item.sources.push_back(source);
}

void count(UnseenMemoryItem& item, int64_t bytes, bool at_peak) {
    add_saturating(item.total_bytes, bytes);
    item.count += 1;
    if (at_peak) add_saturating(item.at_peak_bytes, bytes);
}

enum Kind { kInPool, kLibraryOwn, kNccl, kOutside, kKinds };

// Which kind an allocation outside the pools is, and the library it came from (empty: unknown).
std::pair<Kind, std::string> classify(const Facts& facts, const Allocation& a,
                                      const std::vector<std::string>& stack_libraries) {
    const Call* call = enclosing_call(facts, a);
    if ((call && call->library == "NCCL") || contains(stack_libraries, "NCCL")) return {kNccl, "NCCL"};
    if (call) return {kLibraryOwn, call->library};
    if (auto it = facts.workspace_library.find(a.id); it != facts.workspace_library.end())
        return {kLibraryOwn, it->second};
    for (const std::string& library : stack_libraries)
        if (library != "PyTorch") return {kLibraryOwn, library};
    return {kOutside, {}};
}

// Workspace ranges handed out of the pools: one per (address, bytes), live from its first call's
// begin to its last call's end; at the peak, overlapping live ranges count once per byte.
void count_pool_workspaces(const Facts& facts, const std::set<int64_t>& pool, int64_t peak_trace_ns,
                           UnseenMemoryItem& item) {
    std::map<std::pair<int64_t, int64_t>, WorkspaceRange> ranges;
    for (const auto& [key, use] : facts.workspace_uses) {
        if (!pool.contains(use.segment)) continue;
        auto [it, fresh] = ranges.try_emplace(key, use);
        it->second.first_trace_ns = std::min(it->second.first_trace_ns, use.first_trace_ns);
        it->second.last_trace_ns = std::max(it->second.last_trace_ns, use.last_trace_ns);
    }
    std::vector<std::pair<int64_t, int64_t>> live;  // [begin, end) addresses at the peak
    for (const auto& [key, span] : ranges) {
        count(item, key.second, false);
        if (span.first_trace_ns <= peak_trace_ns && peak_trace_ns <= span.last_trace_ns)
            live.push_back({key.first, key.first + key.second});
    }
    std::sort(live.begin(), live.end());
    int64_t reach = INT64_MIN;
    for (const auto& [begin, end] : live) {
        add_saturating(item.at_peak_bytes, std::max<int64_t>(0, end - std::max(begin, reach)));
        reach = std::max(reach, end);
    }
}

}  // namespace

void collect_unseen_allocation(const trace::AllocationRow& row, std::vector<UnseenAllocation>& allocations) {
    if (!device_memory(row.kind) || row.bytes <= 0 || row.bytes > kMaxAllocationBytes) return;
    UnseenAllocation a;
    a.id = row.id;
    a.process = row.process;
    a.bytes = row.bytes;
    a.alloc_ns = row.alloc_ns;
    a.thread_value = row.thread.value_or(0);
    a.free_ns_value = row.free_ns.value_or(0);
    a.stack_value = row.stack.value_or(0);
    a.present = static_cast<uint8_t>((row.thread ? UnseenAllocation::kThread : 0) |
                                     (row.free_ns ? UnseenAllocation::kFreeNs : 0) |
                                     (row.stack ? UnseenAllocation::kStack : 0));
    a.stream_ordered = row.kind == trace::MemoryKind::device_async;
    allocations.push_back(a);
}

FrameworkUnseenMemory framework_unseen_memory(const trace::Database& db, int64_t peak_trace_ns,
                                              std::vector<UnseenAllocation> allocations) {
    Facts facts;
    facts.allocations = std::move(allocations);
    read_pool_marks(db, facts);
    StackLibraries stacks(db);
    FrameworkUnseenMemory out;
    std::set<int64_t> pool;
    int64_t by_stack = 0;
    for (const Allocation& a : facts.allocations) {
        const bool pytorch =
            (a.bytes >= kSmallestSegmentBytes || a.stream_ordered) && contains(stacks.of(a.stack()), "PyTorch");
        by_stack += pytorch ? 1 : 0;
        if (pytorch || facts.subrange_owners.contains(a.id) || facts.registered.contains(a.id)) pool.insert(a.id);
    }
    if (pool.empty()) return out;  // no framework allocator: library calls need not be read
    read_library_calls(db, facts);
    out.present = true;
    // Tensors recovered inside allocations are all a pool's segments show, and all a program's own
    // arenas show too (llm.c's, one allocation per kind): the trace alone does not tell them apart.
    out.allocator = by_stack > 0                ? "PyTorch's CUDA caching allocator"
                    : !facts.registered.empty() ? "a pool allocator"
                                                : "a pool allocator or the program's own arenas, not told apart";
    if (by_stack > 0) out.evidence.push_back(std::to_string(by_stack) + " allocations made from libc10_cuda");
    if (!facts.subrange_owners.empty())
        out.evidence.push_back(std::to_string(facts.subrange_owners.size()) +
                               " allocations holding tensors the tagger found");
    if (!facts.registered.empty())
        out.evidence.push_back(std::to_string(facts.registered.size()) + " allocations registered through NVTX");
    static const char* const kNames[kKinds] = {"library_workspace_in_pool", "library_own", "nccl", "outside_pools"};
    out.items.resize(kKinds);
    for (int k = 0; k < kKinds; ++k) out.items[static_cast<size_t>(k)].kind = kNames[k];
    for (const Allocation& a : facts.allocations) {
        const bool at_peak = live_at(a.alloc_ns, a.free_ns(), peak_trace_ns);
        if (pool.contains(a.id)) {
            ++out.pool_allocations;
            add_saturating(out.pool_total_bytes, a.bytes);
            add_saturating(out.pool_at_peak_bytes, at_peak ? a.bytes : 0);
            continue;
        }
        auto [kind, library] = classify(facts, a, stacks.of(a.stack()));
        count(out.items[kind], a.bytes, at_peak);
        add_source(out.items[kind], library);
    }
    count_pool_workspaces(facts, pool, peak_trace_ns, out.items[kInPool]);
    for (const auto& [id, library] : facts.workspace_library)
        if (pool.contains(id)) add_source(out.items[kInPool], library);
    for (const UnseenMemoryItem& item : out.items) {
        add_saturating(out.at_peak_bytes, item.at_peak_bytes);
        add_saturating(out.total_bytes, item.total_bytes);
    }
    return out;
}

}  // namespace tbdprof::analyzer
