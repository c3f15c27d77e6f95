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
        out.push_back({e.trace_ns, e.is_alloc(), static_cast<int64_t>(e.index), bytes[e.index]});
    }
    return out;
}

// The pooled segments' tensors' requests and releases at `bytes` (as `tensors`), in the
// replay's order at one instant: the releases that hand a block on to a request of that instant
// (ends_at_reuse), the requests (library workspaces last: the library asks for its workspace once
// its call began, its operands requested before), the other releases (the last use of a tensor and
// the first of another at one instant are one piece of work, whose outputs are requested before it
// is queued and whose inputs are released after), releases of zero-length lives.
std::vector<PoolEvent> pool_events(const std::vector<PoolTensor>& tensors, const std::vector<int64_t>& bytes) {
    struct Ordered {
        PoolEvent event;
        int order;
    };
    std::vector<Ordered> ordered;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PoolTensor& t = tensors[i];
        const int64_t tensor = static_cast<int64_t>(i);
        ordered.push_back({{t.begin_ns, true, tensor, bytes[i]}, t.library_workspace ? 2 : 1});
        ordered.push_back({{t.end_ns, false, tensor, 0}, t.end_ns == t.begin_ns ? 4 : t.ends_at_reuse ? 0 : 3});
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const Ordered& x, const Ordered& y) {
        if (x.event.trace_ns != y.event.trace_ns) return x.event.trace_ns < y.event.trace_ns;
        return x.order < y.order;
    });
    std::vector<PoolEvent> out;
    out.reserve(ordered.size());
    for (const Ordered& o : ordered) out.push_back(o.event);
    return out;
}

int64_t total_bytes(const std::vector<PoolSegment>& segments) {
    int64_t bytes = 0;
    for (const PoolSegment& s : segments) bytes += s.bytes;
    return bytes;
}

std::vector<int64_t> sorted_sizes(const std::vector<PoolSegment>& segments) {
    std::vector<int64_t> sizes;
    for (const PoolSegment& s : segments) sizes.push_back(s.bytes);
    std::sort(sizes.begin(), sizes.end());
    return sizes;
}

// Whether `tensors` (a reading of the placement), replayed at their recorded sizes, give back the
// recorded segments (`recorded`: their sizes, sorted; or in the order they were reserved, `in_order`).
bool gives_back(const std::vector<PoolTensor>& tensors, const std::vector<int64_t>& recorded, bool in_order,
                bool expandable) {
    std::vector<int64_t> tensor_bytes;
    for (const PoolTensor& t : tensors) tensor_bytes.push_back(requested_bytes(t));
    const std::vector<PoolSegment> segments = simulate_caching_pool(pool_events(tensors, tensor_bytes), expandable);
    if (!in_order) return sorted_sizes(segments) == recorded;
    std::vector<int64_t> sizes;
    for (const PoolSegment& s : segments) sizes.push_back(s.bytes);
    return sizes == recorded;
}

std::vector<PoolTensor> joined(std::vector<PoolTensor> tensors, const std::vector<PoolTensor>& more) {
    tensors.insert(tensors.end(), more.begin(), more.end());
    return tensors;
}

// The first reading that gives back the recorded segments (`recorded`: their sorted sizes) becomes
// pool.tensors: released first (PyTorch releases a tensor when its last reference goes, each
// step's tensors its own), then held; with the library workspaces' per-call requests when
// `workspaces`, which must also give the segments back in the order they were reserved (a workspace
// the program allocated before its pool's first segment, outside the pool, is not one of them).
bool choose_reading(const RecordedRun& run, const std::vector<int64_t>& recorded, bool workspaces, PoolModel& pool) {
    const std::vector<PoolTensor> none;
    const std::vector<PoolTensor>& extra = workspaces ? run.pool_readings.workspaces : none;
    for (const bool held : {false, true}) {
        std::vector<PoolTensor> tensors = joined(held ? run.pool_readings.held : run.pool_readings.released, extra);
        if (!gives_back(tensors, recorded, workspaces, pool.expandable)) continue;
        pool.tensors = std::move(tensors);
        pool.held = held;
        pool.workspaces = workspaces ? run.pool_readings.workspace_segments.size() : 0;
        return true;
    }
    return false;
}

// Whether any page of the mapped segment whose first page is `head` has tensors inside.
bool segment_has_tensors(const RecordedRun& run, size_t head) {
    for (const auto& [index, place] : run.pool_readings.mapped.place)
        if (place.head == head && run.allocations[index].by_subrange) return true;
    return false;
}

// The bytes of `pool`'s recorded segments less those its replay of pool.tensors at their recorded
// sizes reserves.
int64_t miss_at_recorded_sizes(const RecordedRun& run, const PoolModel& pool) {
    std::vector<int64_t> tensor_bytes;
    for (const PoolTensor& t : pool.tensors) tensor_bytes.push_back(requested_bytes(t));
    int64_t miss = 0;
    for (size_t i : pool.segments) miss += run.allocations[i].bytes;
    for (const PoolSegment& s : simulate_caching_pool(pool_events(pool.tensors, tensor_bytes), pool.expandable))
        miss -= s.bytes;
    return miss;
}

// `pool`'s recorded segments, in the order they were reserved.
std::vector<PoolSegment> recorded_segments(const RecordedRun& run, const PoolModel& pool) {
    std::vector<PoolSegment> out;
    for (size_t i : pool.segments) out.push_back({run.allocations[i].alloc_ns, run.allocations[i].bytes});
    return out;
}

// `segments` less those `unrecorded` names (same instant, same bytes), each left out once.
std::vector<PoolSegment> without_unrecorded(std::vector<PoolSegment> segments,
                                            const std::vector<PoolSegment>& unrecorded) {
    for (const PoolSegment& u : unrecorded) {
        const auto found = std::find_if(segments.begin(), segments.end(), [&](const PoolSegment& s) {
            return s.alloc_ns == u.alloc_ns && s.bytes == u.bytes;
        });
        if (found != segments.end()) segments.erase(found);
    }
    return segments;
}

// Of `segments`, those reserved for a library call's workspace (one of `tensors` requested at the
// segment's instant, of the segment's bytes): the run shows where each call's workspace lay, and a
// replay reserving one beyond the run's for a call is the case of the batch replay's note; other
// requests' segments the error may shift elsewhere.
std::vector<PoolSegment> reserved_for_workspaces(std::vector<PoolSegment> segments,
                                                 const std::vector<PoolTensor>& tensors) {
    std::erase_if(segments, [&](const PoolSegment& s) {
        return std::none_of(tensors.begin(), tensors.end(), [&](const PoolTensor& t) {
            return t.library_workspace && t.begin_ns == s.alloc_ns && requested_bytes(t) == s.bytes;
        });
    });
    return segments;
}

// Expandable segments whose pages neither reading gives back: a page is a unit of the pool's growth,
// not a request's size, so scaling each page on its own (the fallback of fixed segments) scales
// pages that hold fixed-size tensors and library workspaces with the batch (PyTorch's mlp_train.py
// 2048 -> 512: -20.7%). The released reading is replayed all the same; how far its replay at the
// recorded sizes is from the recorded pages is kept for the note.
void replay_released_anyway(const RecordedRun& run, PoolModel& pool) {
    pool.tensors = run.pool_readings.released;
    pool.page_miss_bytes = miss_at_recorded_sizes(run, pool);
    pool.by_placement = true;
    pool.approximate = true;
}

}  // namespace

PoolModel pool_model(const RecordedRun& run, const std::vector<Event>& events, int64_t granularity) {
    PoolModel pool;
    pool.tensors = run.pool_readings.released;
    pool.pooled.assign(run.real_count, false);
    if (granularity != (int64_t{2} << 20)) return pool;
    std::vector<int64_t> recorded;
    const MappedSegments& mapped = run.pool_readings.mapped;
    size_t pages = 0;
    for (size_t i = 0; i < run.real_count; ++i) {
        // Every page of a mapped segment with tensors inside is the pool's, tensors on it or not.
        const auto page = mapped.place.find(i);
        if (!run.allocations[i].by_subrange &&
            (page == mapped.place.end() || !segment_has_tensors(run, page->second.head)))
            continue;
        pool.segments.push_back(i);
        pool.pooled[i] = true;
        recorded.push_back(run.allocations[i].bytes);
        pages += page != mapped.place.end() ? 1 : 0;
    }
    if (pool.segments.empty()) return pool;
    // One policy for the run: expandable when every pooled allocation is a mapped page (a run that
    // mixes pages with cudaMalloc'd segments is left to the fixed segments' policy and fallback).
    pool.expandable = pages == pool.segments.size();
    std::vector<size_t> reserved = pool.segments;  // with the workspaces, in the order they were reserved
    reserved.insert(reserved.end(), run.pool_readings.workspace_segments.begin(),
                    run.pool_readings.workspace_segments.end());
    std::stable_sort(reserved.begin(), reserved.end(),
                     [&](size_t x, size_t y) { return run.allocations[x].alloc_ns < run.allocations[y].alloc_ns; });
    std::vector<int64_t> with_workspaces;
    for (size_t i : reserved) with_workspaces.push_back(run.allocations[i].bytes);
    std::sort(recorded.begin(), recorded.end());
    // Tensors between the library calls in a segment counted whole as a library workspace are not
    // placed: at another size they may take its freed block, and the library's next workspace then
    // needs a segment of its own (transformer_train.py --layers 4, 128 -> 64: the run reserves a second
    // 32 MiB segment; the replay, without them, said "fits" 15.7% under the peak). The replay of
    // the other tensors is no bound on them: the segments are scaled on their own, with that margin
    // (a batch changed alone is replayed all the same, with the per-call workspaces: batch_pool_model).
    pool.unplaced_in_workspace = !pool.expandable && run.pool_readings.workspace_used_outside_calls;
    if (pool.unplaced_in_workspace) return pool;
    const bool workspaces =
        !run.pool_readings.workspace_segments.empty() && choose_reading(run, with_workspaces, true, pool);
    if (workspaces) {
        for (size_t i : run.pool_readings.workspace_segments) {
            pool.segments.push_back(i);
            pool.pooled[i] = true;
        }
    }
    pool.by_placement = workspaces || choose_reading(run, recorded, false, pool);
    if (!pool.by_placement && pool.expandable) replay_released_anyway(run, pool);
    pool.usable = pool.by_placement ||
                  sorted_sizes(simulate_caching_pool(piece_events(run, events, recorded_bytes(run.allocations), pool),
                                                     pool.expandable)) == recorded;
    return pool;
}

// The segments of a run at another batch come from its requests at their new sizes through the
// pool's policy; scaling each segment on its own instead scales the pool's units as if each held
// the batch. Larger: a 20 MiB large-pool segment, or a 32 MiB one reserved for a library's workspace
// that later held activations, doubled (transformer_train.py --d-model 128, 64 -> 128, +47.4%, where
// this replay measured +3.2%). Smaller: the segments counted whole as a library workspace stay, but
// past the first they exist because batch-sized tensors took the freed workspace block between two
// calls, so that the next call's workspace needed a segment of its own; at a smaller batch those
// tensors fit elsewhere and the calls share one block again (--seq 48, 128 -> 64: the run reserves one
// 32 MiB segment where batch 128 reserves three; scaled on its own each was kept, +12.1%). The same
// holds where the released reading gives back the other segments and the workspace segments were left
// out of the replay, kept as recorded (--layers 7, 128 -> 64: +14.9%).
PoolModel batch_pool_model(const RecordedRun& run, PoolModel& pool) {
    if ((pool.usable && !workspaces_left_out(run, pool)) || pool.expandable || pool.segments.empty())
        return PoolModel{};
    PoolModel batch = pool;
    const PoolReadings& readings = run.pool_readings;
    batch.tensors = joined(readings.released, readings.workspaces);
    for (size_t i : readings.workspace_segments) {
        batch.segments.push_back(i);
        batch.pooled[i] = true;
    }
    batch.workspaces = readings.workspace_segments.size();
    batch.usable = batch.by_placement = batch.approximate = true;
    batch.held = false;
    pool.batch_replay = true;
    pool.batch_miss_bytes = miss_at_recorded_sizes(run, batch);
    // Reserving more than the run at its own sizes, the replay placed a request where the run's pool
    // found room (docs/whatif.md, "A segment the run did not reserve"): where another batch's replay
    // reserves that segment again, for the same request, it is that error, not the batch's.
    if (pool.batch_miss_bytes < 0) {
        std::vector<int64_t> tensor_bytes;
        for (const PoolTensor& t : batch.tensors) tensor_bytes.push_back(requested_bytes(t));
        batch.unrecorded_segments = reserved_for_workspaces(
            unmatched_segments(simulate_caching_pool(pool_events(batch.tensors, tensor_bytes), batch.expandable),
                               recorded_segments(run, batch)),
            batch.tensors);
    }
    return batch;
}

std::vector<PoolSegment> unmatched_segments(std::vector<PoolSegment> replayed, std::vector<PoolSegment> recorded) {
    auto by_reservation = [](const PoolSegment& x, const PoolSegment& y) { return x.alloc_ns < y.alloc_ns; };
    std::stable_sort(replayed.begin(), replayed.end(), by_reservation);
    std::stable_sort(recorded.begin(), recorded.end(), by_reservation);
    std::vector<bool> matched(recorded.size(), false);
    std::vector<PoolSegment> out;
    for (const PoolSegment& s : replayed) {
        size_t r = 0;
        while (r < recorded.size() && (matched[r] || recorded[r].bytes != s.bytes)) ++r;
        if (r < recorded.size())
            matched[r] = true;
        else
            out.push_back(s);
    }
    return out;
}

bool workspaces_left_out(const RecordedRun& run, const PoolModel& pool) {
    return pool.usable && pool.by_placement && !pool.held && !pool.expandable && pool.workspaces == 0 &&
           !run.pool_readings.workspace_segments.empty();
}

namespace {

// `all` (the run's allocations, `bytes` each) with the recorded pooled segments replaced by
// `segments`, replayed.
Replayed replay_segments(const RecordedRun& run, std::vector<Allocation> all, std::vector<int64_t> bytes,
                         const std::vector<PoolSegment>& segments, const PoolModel& pool,
                         std::vector<MemoryPoint>* timeline) {
    Allocation segment = run.allocations[pool.segments.front()];
    for (size_t index : pool.segments) {
        const Allocation& a = run.allocations[index];
        segment.freed = segment.freed && a.freed;
        segment.free_ns = std::max(segment.free_ns, a.free_ns);
        bytes[index] = 0;
    }
    for (const PoolSegment& s : segments) {
        segment.alloc_ns = s.alloc_ns;
        all.push_back(segment);
        all.back().free_ns = std::max(segment.free_ns, s.alloc_ns);
        bytes.push_back(s.bytes);
    }
    return replay(all, ordered_events(all), bytes, timeline);
}

}  // namespace

Replayed replay_with_pool(const RecordedRun& run, const std::vector<Event>& events, std::vector<int64_t> bytes,
                          const std::vector<int64_t>& pool_bytes, const PoolModel& pool,
                          std::vector<MemoryPoint>* timeline) {
    const std::vector<PoolEvent> requests =
        pool.by_placement ? pool_events(pool.tensors, pool_bytes) : piece_events(run, events, bytes, pool);
    return replay_segments(
        run, run.allocations, std::move(bytes),
        without_unrecorded(simulate_caching_pool(requests, pool.expandable), pool.unrecorded_segments), pool, timeline);
}

std::vector<PoolSegment> segments_within(const PoolModel& pool, const std::vector<int64_t>& pool_bytes,
                                         const std::vector<int64_t>& reference_bytes) {
    std::vector<PoolSegment> segments =
        simulate_caching_pool(pool_events(pool.tensors, reference_bytes), pool.expandable);
    std::vector<PoolTensor> larger;
    std::vector<int64_t> larger_bytes;
    std::vector<int64_t> either_bytes = reference_bytes;  // each request at the larger of its two sizes
    for (size_t i = 0; i < pool.tensors.size(); ++i)
        if (pool_bytes[i] > reference_bytes[i]) {
            larger.push_back(pool.tensors[i]);
            larger_bytes.push_back(pool_bytes[i]);
            either_bytes[i] = pool_bytes[i];
        }
    if (larger.empty()) return segments;
    for (const PoolSegment& s : simulate_caching_pool(pool_events(larger, larger_bytes), pool.expandable))
        segments.push_back(s);
    // Another placement that exists: every request at the larger of its two sizes through the policy
    // (the larger ones may fit in the reference's free blocks); the one reserving fewer bytes is kept.
    std::vector<PoolSegment> either = simulate_caching_pool(pool_events(pool.tensors, either_bytes), pool.expandable);
    return total_bytes(either) < total_bytes(segments) ? either : segments;
}

Replayed replay_with_segments(const RecordedRun& run, std::vector<int64_t> bytes,
                              const std::vector<PoolSegment>& segments, const PoolModel& pool,
                              std::vector<MemoryPoint>* timeline) {
    return replay_segments(run, run.allocations, std::move(bytes), segments, pool, timeline);
}

Replayed replay_pool_tensors(const RecordedRun& run, const std::vector<Allocation>& allocations,
                             std::vector<int64_t> bytes, const std::vector<PoolTensor>& tensors,
                             const std::vector<int64_t>& tensor_bytes, const PoolModel& pool,
                             std::vector<MemoryPoint>* timeline) {
    std::vector<Allocation> all = allocations;
    for (size_t i = run.real_count; i < all.size(); ++i)
        if (!all[i].real && all[i].segment >= 0 && static_cast<size_t>(all[i].segment) < pool.pooled.size() &&
            pool.pooled[static_cast<size_t>(all[i].segment)])
            bytes[i] = 0;  // a recorded tensor of a pooled segment (or its space): `tensors` stand for them
    Allocation piece = run.allocations[pool.segments.front()];
    piece.real = piece.by_subrange = false;
    piece.freed = true;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const PoolTensor& t = tensors[i];
        piece.segment = static_cast<int64_t>(t.segment);
        piece.alloc_ns = t.begin_ns;
        piece.free_ns = t.end_ns;
        piece.category = t.category;
        all.push_back(piece);  // the tensor in its category, and the space it takes from its segment
        bytes.push_back(tensor_bytes[i]);
        piece.category = kUntagged;
        all.push_back(piece);
        bytes.push_back(-tensor_bytes[i]);
    }
    return replay_segments(run, std::move(all), std::move(bytes),
                           simulate_caching_pool(pool_events(tensors, tensor_bytes), pool.expandable), pool, timeline);
}

}  // namespace tbdprof::analyzer::whatif
