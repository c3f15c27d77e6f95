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

// One pass over the time-ordered events: the live allocations by address (or by size), and Kineto's
// totals that tell what was allocated before the trace.
class Matcher {
public:
    Matcher(MatchResult& result, int64_t window_begin_ns) : result_(result), window_begin_ns_(window_begin_ns) {}

    void add(const MemoryEvent& event) {
        ++result_.gpu_events;
        track_totals(event);
        if (event.bytes == 0) {
            ++result_.warnings["memory events of 0 bytes (ignored)"];
            return;
        }
        const bool keyed = result_.by_address && event.address.has_value();
        if (result_.by_address && !event.address) ++result_.warnings["GPU memory events without Addr (paired by size)"];
        if (event.bytes > 0)
            on_alloc(event, keyed);
        else
            on_free(event, keyed);
    }

    // Memory allocated before the trace and never freed in it: one block live throughout, so live
    // totals match Kineto's Total Allocated. (Blocks freed in the trace are already live from its start.)
    void add_untracked(const HostThread& first_thread) {
        for (const auto& [device, before_trace] : untracked_) {
            const int64_t never_freed = before_trace - preexisting_bytes_[device];
            if (never_freed <= 0) continue;
            MatchedAllocation allocation;
            allocation.device = device;
            allocation.address = synthetic_address(out_.size());
            allocation.bytes = never_freed;
            allocation.alloc_ns = window_begin_ns_;
            allocation.preexisting = true;
            allocation.alloc_thread = first_thread;
            out_.push_back(allocation);
            result_.untracked_bytes[device] = never_freed;
        }
    }

private:
    // Kineto's "Total Allocated" minus the running sum of event sizes: constant when the events are
    // complete; it is what was allocated before the trace (per device).
    void track_totals(const MemoryEvent& event) {
        running_[event.device_id] += event.bytes;
        if (event.total_allocated) {
            const int64_t before_trace = *event.total_allocated - running_[event.device_id];
            auto [it, fresh] = untracked_.try_emplace(event.device_id, before_trace);
            if (!fresh && it->second != before_trace) {
                ++result_.warnings["[memory] events whose Total Allocated disagrees with the sizes seen"];
                it->second = std::min(it->second, before_trace);
            }
        }
        if (event.total_allocated) {
            auto& peak = result_.peak_total_allocated[event.device_id];
            peak = std::max(peak, *event.total_allocated);
        }
        if (event.total_reserved) {
            auto& peak = result_.peak_total_reserved[event.device_id];
            peak = std::max(peak, *event.total_reserved);
        }
    }

    static PairKey size_key(const MemoryEvent& event) {
        return PairKey{event.device_id, event.bytes > 0 ? event.bytes : -event.bytes};
    }

    void on_alloc(const MemoryEvent& event, bool keyed) {
        if (keyed) {
            auto [it, inserted] = live_by_address_.try_emplace(*event.address, out_.size());
            if (!inserted) {
                // The previous block's free is missing: end it here so lifetimes do not overlap.
                ++result_.warnings["allocations at a live address (previous one ended there)"];
                out_[it->second].free_ns = event.time_ns;
                it->second = out_.size();
            }
        } else {
            live_by_size_[size_key(event)].push_back(out_.size());
        }
        MatchedAllocation allocation;
        allocation.device = event.device_id;
        allocation.address = keyed ? *event.address : synthetic_address(out_.size());
        allocation.bytes = event.bytes;
        allocation.alloc_ns = event.time_ns;
        allocation.alloc_thread = event.thread;
        allocation.category = event.category;
        out_.push_back(std::move(allocation));
    }

    // The live allocation a free closes, if any.
    std::optional<size_t> take_live(const MemoryEvent& event, bool keyed) {
        std::optional<size_t> match;
        if (keyed) {
            if (auto it = live_by_address_.find(*event.address); it != live_by_address_.end()) {
                match = it->second;
                live_by_address_.erase(it);
                if (out_[*match].bytes != -event.bytes)
                    ++result_.warnings["frees whose size differs from the allocation"];
            }
        } else if (auto it = live_by_size_.find(size_key(event)); it != live_by_size_.end() && !it->second.empty()) {
            match = it->second.back();
            it->second.pop_back();
        }
        return match;
    }

    void on_free(const MemoryEvent& event, bool keyed) {
        std::optional<size_t> match = take_live(event, keyed);
        if (!match) {
            // Allocated before the trace began: it was live from the start of the window.
            ++result_.preexisting;
            preexisting_bytes_[event.device_id] += -event.bytes;
            MatchedAllocation allocation;
            allocation.device = event.device_id;
            allocation.address = keyed ? *event.address : synthetic_address(out_.size());
            allocation.bytes = -event.bytes;
            allocation.alloc_ns = std::min(window_begin_ns_, event.time_ns);
            allocation.alloc_thread = event.thread;
            allocation.preexisting = true;
            allocation.category = event.category;
            out_.push_back(std::move(allocation));
            match = out_.size() - 1;
        }
        out_[*match].free_ns = event.time_ns;
        out_[*match].free_thread = event.thread;
    }

    MatchResult& result_;
    std::vector<MatchedAllocation>& out_ = result_.allocations;
    const int64_t window_begin_ns_;
    std::unordered_map<int64_t, size_t> live_by_address_;  // (device << 56 is not needed: addresses are unique)
    std::unordered_map<PairKey, std::vector<size_t>, PairKeyHash> live_by_size_;
    std::map<int32_t, int64_t> running_, untracked_, preexisting_bytes_;
};

}  // namespace

MatchResult match_allocations(std::vector<MemoryEvent>& events, int64_t window_begin_ns) {
    MatchResult result;
    std::stable_sort(events.begin(), events.end(),
                     [](const MemoryEvent& a, const MemoryEvent& b) { return a.time_ns < b.time_ns; });
    result.by_address = std::any_of(events.begin(), events.end(), [](const MemoryEvent& e) {
        return e.device_type == kCudaDeviceType && e.address.has_value();
    });
    Matcher matcher(result, window_begin_ns);
    for (const MemoryEvent& event : events)
        if (event.device_type == kCudaDeviceType) matcher.add(event);
    matcher.add_untracked(events.empty() ? HostThread{} : events.front().thread);
    return result;
}

}  // namespace tbdprof::interop
