// The caching pool's replay in a memory what-if (whatif_pool_replay.h).
#include "whatif_pool_replay.h"

#include <algorithm>

#include "whatif_pool.h"

namespace tbdprof::analyzer::whatif {

namespace {

// The pooled segments' pieces (the report's replay) as requests and releases at `bytes`.
std::vector<PoolEvent> piece_events(const RecordedRun& run, const std::vector<Event>& events,
                                    const std::vector<int64_t>& bytes, const PoolModel& pool) {
    std::vector<PoolEvent> out;
    for (const Event& e : events) {
        const Allocation& a = run.allocations[e.index];
        if (a.real || a.bytes <= 0 || a.segment < 0 || !pool.pooled[static_cast<size_t>(a.segment)]) continue;
        out.push_back({e.time, e.is_alloc(), static_cast<int64_t>(e.index), bytes[e.index]});
    }
    return out;
}

// The pooled segments' tensors' requests and releases at `bytes` (as `tensors`), in the
// replay's order: releases before requests at one instant, releases of zero-length lives after.
std::vector<PoolEvent> pool_events(const std::vector<PoolTensor>& tensors, const std::vector<int64_t>& bytes) {
    struct Ordered {
        PoolEvent event;
        int order;
    };
    std::vector<Ordered> ordered;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PoolTensor& t = tensors[i];
        const int64_t tensor = static_cast<int64_t>(i);
        ordered.push_back({{t.begin_ns, true, tensor, bytes[i]}, 1});
        ordered.push_back({{t.end_ns, false, tensor, 0}, t.end_ns == t.begin_ns ? 2 : 0});
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const Ordered& x, const Ordered& y) {
        if (x.event.time_ns != y.event.time_ns) return x.event.time_ns < y.event.time_ns;
        return x.order < y.order;
    });
    std::vector<PoolEvent> out;
    out.reserve(ordered.size());
    for (const Ordered& o : ordered) out.push_back(o.event);
    return out;
}

std::vector<int64_t> sorted_sizes(const std::vector<PoolSegment>& segments) {
    std::vector<int64_t> sizes;
    for (const PoolSegment& s : segments) sizes.push_back(s.bytes);
    std::sort(sizes.begin(), sizes.end());
    return sizes;
}

// Whether `tensors` (a reading of the placement), replayed at their recorded sizes, give back the
// recorded segments (sorted sizes).
bool gives_back(const std::vector<PoolTensor>& tensors, const std::vector<int64_t>& recorded) {
    std::vector<int64_t> tensor_bytes;
    for (const PoolTensor& t : tensors) tensor_bytes.push_back(t.bound ? 1 : t.bytes);
    return sorted_sizes(simulate_caching_pool(pool_events(tensors, tensor_bytes))) == recorded;
}

}  // namespace

PoolModel pool_model(RecordedRun& run, const std::vector<Event>& events, int64_t granularity) {
    PoolModel pool;
    pool.pooled.assign(run.real_count, false);
    if (granularity != (int64_t{2} << 20)) return pool;
    std::vector<int64_t> recorded;
    for (size_t i = 0; i < run.real_count; ++i)
        if (run.allocations[i].by_subrange) {
            pool.segments.push_back(i);
            pool.pooled[i] = true;
            recorded.push_back(run.allocations[i].bytes);
        }
    if (pool.segments.empty()) return pool;
    std::sort(recorded.begin(), recorded.end());
    // Released first: PyTorch releases a tensor when its last reference goes, each step's tensors its own.
    pool.by_placement = gives_back(run.pool_readings.released, recorded);
    if (pool.by_placement) {
        run.pool_tensors = run.pool_readings.released;
    } else if (gives_back(run.pool_readings.held, recorded)) {
        pool.by_placement = pool.held = true;
        run.pool_tensors = run.pool_readings.held;
    }
    pool.usable = pool.by_placement || sorted_sizes(simulate_caching_pool(piece_events(
                                           run, events, recorded_bytes(run.allocations), pool))) == recorded;
    return pool;
}

Replayed replay_with_pool(const RecordedRun& run, const std::vector<Event>& events, std::vector<int64_t> bytes,
                          const std::vector<int64_t>& pool_bytes, const PoolModel& pool,
                          std::vector<MemoryPoint>* timeline) {
    const std::vector<PoolEvent> requests =
        pool.by_placement ? pool_events(run.pool_tensors, pool_bytes) : piece_events(run, events, bytes, pool);
    std::vector<Allocation> all = run.allocations;
    Allocation segment = run.allocations[pool.segments.front()];
    for (size_t index : pool.segments) {
        const Allocation& a = run.allocations[index];
        segment.freed = segment.freed && a.freed;
        segment.free_ns = std::max(segment.free_ns, a.free_ns);
        bytes[index] = 0;
    }
    for (const PoolSegment& s : simulate_caching_pool(requests)) {
        segment.alloc_ns = s.alloc_ns;
        all.push_back(segment);
        all.back().free_ns = std::max(segment.free_ns, s.alloc_ns);
        bytes.push_back(s.bytes);
    }
    return replay(all, ordered_events(all), bytes, timeline);
}

}  // namespace tbdprof::analyzer::whatif
