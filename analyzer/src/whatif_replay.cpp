// The memory what-if's replay of a timeline at a scenario's bytes (whatif_replay.h).
#include "whatif_replay.h"

#include <algorithm>

namespace tbdprof::analyzer::whatif {

Replayed replay(const std::vector<Allocation>& allocations, const std::vector<Event>& events,
                const std::vector<int64_t>& bytes, std::vector<MemoryPoint>* timeline) {
    Replayed out;
    CategoryBytes live{};
    int64_t total = 0;
    std::map<int64_t, std::pair<int64_t, int64_t>> device_live;
    for (size_t position = 0; position < events.size(); ++position) {
        const Event& event = events[position];
        const Allocation& a = allocations[event.index];
        const int64_t delta = event.is_alloc() ? bytes[event.index] : -bytes[event.index];
        live[static_cast<size_t>(a.category)] += delta;
        total += delta;
        device_live[a.device].first += delta;
        if (position + 1 < events.size() && events[position + 1].trace_ns == event.trace_ns &&
            events[position + 1].order == event.order)
            continue;
        for (auto& [device, state] : device_live) state.second = std::max(state.second, state.first);
        for (int c = 0; c < kCategoryCount; ++c) out.category_max[c] = std::max(out.category_max[c], live[c]);
        if (timeline) timeline->push_back({event.trace_ns, live});
        if (total > out.peak_bytes) {
            out.peak_bytes = total;
            out.peak_trace_ns = event.trace_ns;
            out.at_peak = live;
        }
    }
    for (const auto& [device, state] : device_live) out.device_peaks[device] = state.second;
    return out;
}

std::vector<int64_t> recorded_bytes(const std::vector<Allocation>& allocations) {
    std::vector<int64_t> bytes;
    bytes.reserve(allocations.size());
    for (const Allocation& a : allocations) bytes.push_back(a.bytes);
    return bytes;
}

}  // namespace tbdprof::analyzer::whatif
