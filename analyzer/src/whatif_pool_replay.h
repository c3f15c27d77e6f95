// The caching pool's replay in a memory what-if (docs/whatif.md, "The model", points 5 and 6): when
// the recorded segments are a caching pool's, the tensors' requests at a scenario's sizes replayed
// through the pool's policy (whatif_pool.h) give the segments, in place of the recorded ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory_allocations.h"
#include "whatif_pool.h"
#include "whatif_replay.h"
#include "whatif_run.h"

namespace tbdprof::analyzer::whatif {

// A run whose device allocations are a caching pool's segments (2 MiB granularity, tensors inside):
// the pool's policy (whatif_pool.h) replayed on the tensors gives the segments at other sizes. Only
// used when replaying the recorded sizes gives the recorded segments back.
struct PoolModel {
    bool usable = false;
    // The tensors in the pool's order (`tensors`) give back the recorded segments; otherwise the
    // replay's pieces do (as the report replays them: overlaps resolved, lives as recovered).
    bool by_placement = false;
    // The reading of the pooled segments' tensors this model's replay requests (with by_placement).
    // Each model carries its own, so that one command replays the batch alone with the per-call
    // workspaces (batch_pool_model) and its other scenarios with the pool's own reading.
    std::vector<PoolTensor> tensors;
    // With by_placement: the held reading (batch-sized tensors recovered again on the same bytes
    // joined into one request), as the released one did not give back the recorded segments.
    bool held = false;
    // With by_placement: how many segments counted whole as a library workspace joined the pool,
    // their calls' workspaces requested per call (whatif_pool_tensors.h).
    size_t workspaces = 0;
    // PyTorch's expandable segments (mapped pages, whatif_mapped.h): the replay maps pages
    // (whatif_pool.h) and `segments` are the recorded pages.
    bool expandable = false;
    // With expandable: neither reading gave back the recorded pages, and the released one is replayed
    // all the same; `page_miss_bytes`: the recorded pages' bytes less those its replay at the
    // recorded sizes maps (the model's miss where it can be measured, said in a note).
    bool approximate = false;
    int64_t page_miss_bytes = 0;
    // Kernels outside the library calls used a segment counted whole as a library workspace: tensors
    // lay there that the replay cannot place, so it is not used (not `usable`).
    bool unplaced_in_workspace = false;
    // Fixed segments that neither reading gives back: a batch changed alone (larger or smaller) is
    // predicted by the replay all the same (from batch_pool_model), the rest by each segment scaled on
    // its own. `batch_miss_bytes`: the recorded segments' bytes less those the replay at the recorded
    // sizes reserves (said in the note).
    bool batch_replay = false;
    int64_t batch_miss_bytes = 0;
    // The batch replay's own error (batch_pool_model): segments its replay at the recorded sizes
    // reserves for a library call's workspace that no recorded segment of the same bytes answers
    // (unmatched_segments; the run shows each call's workspace in a segment it had). A scenario's
    // replay that reserves a segment of those bytes at the same instant repeats that error: the
    // segment is left out (replay_with_pool).
    std::vector<PoolSegment> unrecorded_segments;
    std::vector<size_t> segments;  // indices of the recorded segments counted by their tensors
    std::vector<bool> pooled;      // per real allocation
};

// Whether the pool's replay applies to `run` (2 MiB granularity, segments with tensors inside that
// the replay at the recorded sizes gives back), and with which requests: `tensors` is the reading of
// the placement that gives them back (the released one first, whatif_pool_tensors.h).
PoolModel pool_model(const RecordedRun& run, const std::vector<Event>& events, int64_t granularity);

// For fixed segments that neither reading gives back (pool.usable false): the pool replayed all the
// same with the released reading and the library calls' per-call workspaces, for scenarios that
// change the batch alone (whatif_scenarios.h, only_changes_batch; docs/whatif.md, "Fits"); `usable`
// false where it does not apply; its `tensors` are the released reading and the workspaces. Sets
// pool.batch_replay and batch_miss_bytes for the note (pool's own tensors are left as they are).
// Also for a pool whose replay gives back its segments with the library workspace segments left out
// (workspaces_left_out): their per-call requests join the replay for those scenarios.
PoolModel batch_pool_model(const RecordedRun& run, PoolModel& pool);

// Whether `pool` gives back the recorded segments by the released reading with the segments counted
// whole as a library workspace left out of its replay (they stay as recorded in every scenario).
bool workspaces_left_out(const RecordedRun& run, const PoolModel& pool);

// The segments of `replayed` (a replay at the recorded sizes) that no segment of `recorded` answers:
// taken in the order they were reserved, each is matched to the earliest recorded segment of its bytes
// not yet matched; those left over, in that order.
std::vector<PoolSegment> unmatched_segments(std::vector<PoolSegment> replayed, std::vector<PoolSegment> recorded);

// The scenario's replay with the recorded pooled segments replaced by those the pool would reserve
// for the tensors at their new sizes.
// `pool_bytes`: the tensors' bytes (as pool.tensors) in the scenario.
Replayed replay_with_pool(const RecordedRun& run, const std::vector<Event>& events, std::vector<int64_t> bytes,
                          const std::vector<int64_t>& pool_bytes, const PoolModel& pool,
                          std::vector<MemoryPoint>* timeline);

// The segments a scenario's requests (`pool_bytes`, as pool.tensors) need at most, given another
// scenario's (`reference_bytes`) on the same tensors: each request no larger than the reference's fits
// where the reference's replay placed it, in the reference's segments; the larger ones (a master copy
// joining the optimizer state) are replayed through the policy on their own, in segments of their own.
// Or, where that reserves fewer bytes, every request at the larger of its two sizes replayed through
// the policy (a larger one may fit in a block the reference left free). Either is a placement that
// exists for the scenario's requests.
// The policy's best fit is no bound: smaller requests can split blocks the larger ones left whole and
// reserve more (docs/whatif.md, "A combined change bounded by the batch alone").
std::vector<PoolSegment> segments_within(const PoolModel& pool, const std::vector<int64_t>& pool_bytes,
                                         const std::vector<int64_t>& reference_bytes);

// replay_with_pool with the recorded pooled segments replaced by `segments` (segments_within).
Replayed replay_with_segments(const RecordedRun& run, std::vector<int64_t> bytes,
                              const std::vector<PoolSegment>& segments, const PoolModel& pool,
                              std::vector<MemoryPoint>* timeline);

// The same replay on another timeline of the tensors (checkpointing: `tensors` with their bytes in
// the scenario, `tensor_bytes`), for a pool replayed by placement. The pooled segments' pieces
// (the recorded tensors) give way to `tensors`, each counted in its category while it lives, so the
// breakdown follows the changed timeline; `allocations` are the run's (whole ones' frees possibly
// moved, re-allocations appended), with `bytes` each.
Replayed replay_pool_tensors(const RecordedRun& run, const std::vector<Allocation>& allocations,
                             std::vector<int64_t> bytes, const std::vector<PoolTensor>& tensors,
                             const std::vector<int64_t>& tensor_bytes, const PoolModel& pool,
                             std::vector<MemoryPoint>* timeline);

}  // namespace tbdprof::analyzer::whatif
