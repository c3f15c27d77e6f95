// memory_heaps and memory_regions rows from the collector's RawMemRegion records (NVTX's memory
// extension). The calls are replayed in time order per process, keeping the live regions by start
// address (a region's handle is its address, preload/nvtx_mem_injection.cpp): a resize ends one
// extent's row and starts the next, unregistering a heap or resetting it ends the regions in it.
// Each heap and region is placed in the allocation holding its start when it was registered.
#include "model_builder.h"

#include <algorithm>
#include <map>

namespace tbdprof::trace::detail {
namespace {

using raw::MemRegionOp;

// Allocations of one process by address, to find the one holding a pointer at a time.
class AllocationIndex {
public:
    AllocationIndex(const std::vector<AllocationRow>& allocations, int64_t process) : all_(allocations) {
        for (size_t i = 0; i < allocations.size(); ++i)
            if (allocations[i].process == process) by_address_.push_back(i);
        std::sort(by_address_.begin(), by_address_.end(),
                  [&](size_t a, size_t b) { return allocations[a].address < allocations[b].address; });
    }
    // The allocation live at `at_ns` (relative) whose [address, address + bytes) holds `address`.
    const AllocationRow* holding(uint64_t address, int64_t at_ns) const {
        auto it = std::upper_bound(by_address_.begin(), by_address_.end(), address,
                                   [&](uint64_t a, size_t i) { return a < uint64_t(all_[i].address); });
        // Allocations at lower addresses that are no longer live can come first: look a little further.
        for (int below = 0; it != by_address_.begin() && below < 64; ++below) {
            const AllocationRow& row = all_[*--it];
            const bool live = row.alloc_ns <= at_ns && (!row.free_ns || *row.free_ns > at_ns);
            if (live && address - uint64_t(row.address) < uint64_t(std::max<int64_t>(row.bytes, 1))) return &row;
        }
        return nullptr;
    }

private:
    const std::vector<AllocationRow>& all_;
    std::vector<size_t> by_address_;
};

std::string usage_text(uint32_t usage) {
    std::string text;
    if (usage & 0x1) text = "sub_allocator";                       // NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR
    if (usage & 0x2) text += text.empty() ? "layout" : ",layout";  // NVTX_MEM_HEAP_USAGE_TYPE_LAYOUT
    return text.empty() ? "unknown" : text;
}

// One process's calls replayed.
class RegionReplay {
public:
    RegionReplay(TraceModel& model, int64_t process, const AllocationIndex& allocations)
        : model_(model), process_(process), allocations_(allocations) {}

    void heap_register(const raw::RawMemRegion& r, int64_t at_ns, Opt thread, std::optional<std::string> name,
                       std::optional<std::string> domain) {
        MemoryHeapRow row;
        row.id = int64_t(model_.memory_heaps.size()) + 1;
        row.process = process_;
        row.thread = thread;
        row.handle = int64_t(r.heap);
        row.address = int64_t(r.address);
        row.bytes = int64_t(r.bytes);
        place(row, r.address, at_ns);
        row.usage = usage_text(r.usage);
        row.name = std::move(name);
        row.domain = std::move(domain);
        row.register_ns = at_ns;
        heaps_[r.heap] = model_.memory_heaps.size();
        model_.memory_heaps.push_back(std::move(row));
    }

    // Unregister (the heap ends) or reset (its regions end, the heap stays; handle 0: process-wide).
    void heap_end(uint64_t handle, int64_t at_ns, bool unregister) {
        Opt heap_id;
        if (handle != 0) {
            auto it = heaps_.find(handle);
            if (it == heaps_.end()) return;
            heap_id = model_.memory_heaps[it->second].id;
            if (unregister) {
                model_.memory_heaps[it->second].unregister_ns = at_ns;
                heaps_.erase(it);
            }
        }
        for (auto it = live_.begin(); it != live_.end();) {
            if (model_.memory_regions[it->second].heap == heap_id) {
                end(it->second, at_ns, unregister ? "heap_unregistered" : "heap_reset");
                it = live_.erase(it);
            } else {
                ++it;
            }
        }
    }

    void region_register(const raw::RawMemRegion& r, int64_t at_ns) {
        if (auto old = live_.find(r.address); old != live_.end()) end(old->second, at_ns, "replaced");
        MemoryRegionRow row;
        if (auto heap = heaps_.find(r.heap); heap != heaps_.end()) row.heap = model_.memory_heaps[heap->second].id;
        row.address = int64_t(r.address);
        row.bytes = int64_t(r.bytes);
        place(row, r.address, at_ns);
        start(std::move(row), at_ns);
    }

    void region_resize(const raw::RawMemRegion& r, int64_t at_ns) {
        auto it = live_.find(r.address);
        if (it == live_.end()) return;
        end(it->second, at_ns, "resized");
        MemoryRegionRow next = model_.memory_regions[it->second];
        next.bytes = int64_t(r.bytes);
        next.unregister_ns.reset();
        next.end_reason.reset();
        start(std::move(next), at_ns);
    }

    void region_unregister(uint64_t address, int64_t at_ns) {
        auto it = live_.find(address);
        if (it == live_.end()) return;
        end(it->second, at_ns, "unregistered");
        live_.erase(it);
    }

    void region_name(uint64_t address, std::optional<std::string> name) {
        auto it = live_.find(address);
        if (it != live_.end()) model_.memory_regions[it->second].name = std::move(name);
    }

private:
    template <class Row>
    void place(Row& row, uint64_t address, int64_t at_ns) {
        if (const AllocationRow* a = allocations_.holding(address, at_ns)) {
            row.allocation = a->id;
            row.device = a->device;
        }
    }
    void start(MemoryRegionRow row, int64_t at_ns) {
        row.id = int64_t(model_.memory_regions.size()) + 1;
        row.process = process_;
        row.register_ns = at_ns;
        live_[uint64_t(row.address)] = model_.memory_regions.size();
        model_.memory_regions.push_back(std::move(row));
    }
    void end(size_t row, int64_t at_ns, std::string_view reason) {
        model_.memory_regions[row].unregister_ns = at_ns;
        model_.memory_regions[row].end_reason = reason;
    }

    TraceModel& model_;
    int64_t process_;
    const AllocationIndex& allocations_;
    std::map<uint64_t, size_t> heaps_;  // live heap handle -> memory_heaps index
    std::map<uint64_t, size_t> live_;   // live region address -> memory_regions index
};

}  // namespace

void ModelBuilder::build_memory_regions() {
    for (ProcessContext& p : contexts_) {
        auto events = p.raw->memory_regions;
        if (events.empty()) continue;
        // Threads' records interleave in chunks: time order, file order within one thread's ties.
        std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
            return a.record.host_ns != b.record.host_ns ? a.record.host_ns < b.record.host_ns
                                                        : a.file_offset < b.file_offset;
        });
        const AllocationIndex allocations(model_.allocations, p.id);
        RegionReplay replay(model_, p.id, allocations);
        auto text = [&](uint64_t id) { return id == 0 ? std::nullopt : std::optional<std::string>(p.raw->string(id)); };
        for (const auto& e : events) {
            const raw::RawMemRegion& r = e.record;
            const int64_t at = rel(r.host_ns);
            switch (r.op) {
                case MemRegionOp::HeapRegister:
                    replay.heap_register(r, at, thread_id(p, e.tid), text(r.name_string), text(r.domain_string));
                    break;
                case MemRegionOp::HeapUnregister:
                    replay.heap_end(r.heap, at, true);
                    break;
                case MemRegionOp::HeapReset:
                    replay.heap_end(r.heap, at, false);
                    break;
                case MemRegionOp::RegionRegister:
                    replay.region_register(r, at);
                    break;
                case MemRegionOp::RegionResize:
                    replay.region_resize(r, at);
                    break;
                case MemRegionOp::RegionUnregister:
                    replay.region_unregister(r.address, at);
                    break;
                case MemRegionOp::RegionName:
                    replay.region_name(r.address, text(r.name_string));
                    break;
            }
        }
        counters_.events += events.size();
    }
}

}  // namespace tbdprof::trace::detail
