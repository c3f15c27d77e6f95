#include "memory_matching.h"

#include <algorithm>
#include <unordered_map>

namespace tbdprof::interop {
namespace {

constexpr int32_t kCudaDeviceType = 1;

// Synthetic addresses for sources without them: negative (bit pattern 0xffff...), a range no user
// space allocation can have, one per allocation, so address-keyed readers still see distinct blocks.
int64_t synthetic_address(size_t index) { return -static_cast<int64_t>(index) - 1; }

// Pairing ignores categories: torch's memory timeline may recategorise a tensor between its creation
// and its destruction (a new version), and sizes alone pair every destroy there.
struct PairKey {
    int32_t device;
    int64_t bytes;
    bool operator==(const PairKey&) const = default;
};
struct PairKeyHash {
    size_t operator()(const PairKey& key) const {
        return std::hash<int64_t>()(key.bytes) * 31 + std::hash<int32_t>()(key.device);
    }
};

}  // namespace

MatchResult match_allocations(std::vector<MemoryEvent>& events, int64_t window_begin_ns) {
    MatchResult result;
    std::stable_sort(events.begin(), events.end(),
                     [](const MemoryEvent& a, const MemoryEvent& b) { return a.ts_ns < b.ts_ns; });
    result.by_address = std::any_of(events.begin(), events.end(), [](const MemoryEvent& e) {
        return e.device_type == kCudaDeviceType && e.address.has_value();
    });
    std::unordered_map<int64_t, size_t> live_by_address;  // (device << 56 is not needed: addresses are unique)
    std::unordered_map<PairKey, std::vector<size_t>, PairKeyHash> live_by_size;
    auto& out = result.allocations;
    // Kineto's "Total Allocated" minus the running sum of event sizes: constant when the events are
    // complete; it is what was allocated before the trace (per device).
    std::map<int32_t, int64_t> running, untracked;
    std::map<int32_t, int64_t> preexisting_bytes;
    for (const MemoryEvent& event : events) {
        if (event.device_type != kCudaDeviceType) continue;
        ++result.gpu_events;
        running[event.device_id] += event.bytes;
        if (event.total_allocated) {
            const int64_t before_trace = *event.total_allocated - running[event.device_id];
            auto [it, fresh] = untracked.try_emplace(event.device_id, before_trace);
            if (!fresh && it->second != before_trace) {
                ++result.warnings["[memory] events whose Total Allocated disagrees with the sizes seen"];
                it->second = std::min(it->second, before_trace);
            }
        }
        if (event.total_allocated) {
            auto& peak = result.peak_total_allocated[event.device_id];
            peak = std::max(peak, *event.total_allocated);
        }
        if (event.total_reserved) {
            auto& peak = result.peak_total_reserved[event.device_id];
            peak = std::max(peak, *event.total_reserved);
        }
        if (event.bytes == 0) {
            ++result.warnings["memory events of 0 bytes (ignored)"];
            continue;
        }
        const bool keyed = result.by_address && event.address.has_value();
        if (result.by_address && !event.address) ++result.warnings["GPU memory events without Addr (paired by size)"];
        const PairKey size_key{event.device_id, event.bytes > 0 ? event.bytes : -event.bytes};
        if (event.bytes > 0) {
            if (keyed) {
                auto [it, inserted] = live_by_address.try_emplace(*event.address, out.size());
                if (!inserted) {
                    // The previous block's free is missing: end it here so lifetimes do not overlap.
                    ++result.warnings["allocations at a live address (previous one ended there)"];
                    out[it->second].free_ns = event.ts_ns;
                    it->second = out.size();
                }
            } else {
                live_by_size[size_key].push_back(out.size());
            }
            MatchedAllocation allocation;
            allocation.device = event.device_id;
            allocation.address = keyed ? *event.address : synthetic_address(out.size());
            allocation.bytes = event.bytes;
            allocation.alloc_ns = event.ts_ns;
            allocation.alloc_thread = event.thread;
            allocation.category = event.category;
            out.push_back(std::move(allocation));
            continue;
        }
        std::optional<size_t> match;
        if (keyed) {
            if (auto it = live_by_address.find(*event.address); it != live_by_address.end()) {
                match = it->second;
                live_by_address.erase(it);
                if (out[*match].bytes != -event.bytes) ++result.warnings["frees whose size differs from the allocation"];
            }
        } else if (auto it = live_by_size.find(size_key); it != live_by_size.end() && !it->second.empty()) {
            match = it->second.back();
            it->second.pop_back();
        }
        if (!match) {
            // Allocated before the trace began: it was live from the start of the window.
            ++result.preexisting;
            preexisting_bytes[event.device_id] += -event.bytes;
            MatchedAllocation allocation;
            allocation.device = event.device_id;
            allocation.address = keyed ? *event.address : synthetic_address(out.size());
            allocation.bytes = -event.bytes;
            allocation.alloc_ns = std::min(window_begin_ns, event.ts_ns);
            allocation.alloc_thread = event.thread;
            allocation.preexisting = true;
            allocation.category = event.category;
            out.push_back(std::move(allocation));
            match = out.size() - 1;
        }
        out[*match].free_ns = event.ts_ns;
        out[*match].free_thread = event.thread;
    }
    // Memory allocated before the trace and never freed in it: one block live throughout, so live
    // totals match Kineto's Total Allocated. (Blocks freed in the trace are already live from its start.)
    for (const auto& [device, before_trace] : untracked) {
        const int64_t never_freed = before_trace - preexisting_bytes[device];
        if (never_freed <= 0) continue;
        MatchedAllocation allocation;
        allocation.device = device;
        allocation.address = synthetic_address(out.size());
        allocation.bytes = never_freed;
        allocation.alloc_ns = window_begin_ns;
        allocation.preexisting = true;
        allocation.alloc_thread = events.empty() ? HostThread{} : events.front().thread;
        out.push_back(allocation);
        result.untracked_bytes[device] = never_freed;
    }
    return result;
}

}  // namespace tbdprof::interop
