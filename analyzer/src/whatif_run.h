// The recorded run a memory what-if starts from (docs/whatif.md, "The model"): every device
// allocation and free as the report replays them (memory_allocations.h), which categories' tensors
// were placed on which bytes of each segment, the pool's tensors in the pool's order, the devices,
// the iterations, the GEMM precision and the facts the plausibility and checkpointing rules need.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "memory_allocations.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "tbdprof/analyzer/whatif.h"
#include "tbdprof/trace/tables.h"
#include "whatif_checkpoint.h"
#include "whatif_pool_tensors.h"

namespace tbdprof::analyzer::whatif {

constexpr int kWeights = static_cast<int>(trace::Category::weights);
constexpr int kGradients = static_cast<int>(trace::Category::gradients);
constexpr int kOptimizer = static_cast<int>(trace::Category::optimizer_state);
constexpr int kActivations = static_cast<int>(trace::Category::activations);
constexpr int kWorkspace = static_cast<int>(trace::Category::workspace);
constexpr int kInput = static_cast<int>(trace::Category::input);

// Bytes of one segment (an allocation counted by its sub-ranges) by which categories' tensors were
// ever placed there; `mask` bit c: category c. Bytes no tensor covered have mask 0.
struct CoverageSpan {
    int64_t bytes = 0;
    unsigned mask = 0;
};

// One optimizer phase of a process (the tagger's `phases`, host time): the update's own temporaries
// are made in [begin_ns, end_ns] and released before `next_ns` (the process's next iteration).
struct UpdateWindow {
    int64_t begin_ns = 0, end_ns = 0, next_ns = 0;
};

// Everything read from one trace that the scenarios need.
struct RecordedRun {
    std::vector<Allocation> allocations;  // real ones first (id order), then sub-range pieces
    size_t real_count = 0;
    std::unordered_map<size_t, std::vector<CoverageSpan>> coverage;  // by segment index
    std::vector<size_t> master_copy_indices;   // zero-byte optimizer_state allocations a precision change may
                                               // fill, one per rank
    bool master_copy_per_rank = false;         // false: one for the run (no allocation tagged weights)
    std::vector<size_t> comm_buffer_indices;   // zero-byte 'other' allocations ZeRO's buffers fill, one per rank
    std::map<int64_t, int64_t> device_memory;  // device -> bytes (devices table)
    std::string device_name;
    size_t iterations = 0;
    std::vector<int64_t> whole_pooled;               // ids of segments counted whole (no tensors recovered)
    PoolReadings pool_readings;                      // two readings of the pooled segments' tensors
    std::optional<StoragePrecision> gemm_precision;  // from the GEMM operand types
    TagCheckFacts tag_facts;                         // for the report's plausibility rules (tag_plausibility.h)
    CheckpointFacts checkpoint_facts;                // phases and accesses (read with --checkpoint only)
    std::map<int64_t, int64_t> layer_weight_bytes;   // by process: the largest weights operand of one library call
    std::map<int64_t, std::vector<UpdateWindow>> update_windows;  // by process, in time order
    std::vector<uint8_t> gemm_roles;  // per real allocation: a GEMM read (1) or wrote (2) it (whatif_autocast.h)
};

// Whether a tensor of `process` living [begin_ns, end_ns] is one of the update's own temporaries:
// made inside an optimizer phase and released before the next iteration (an Adam's denominators,
// one per parameter it updates). Under ZeRO a rank updates only its shard, so these shrink with it.
bool is_update_temporary(const RecordedRun& run, int64_t process, int64_t begin_ns, int64_t end_ns);

// Reads the trace at `path` (TraceError when it cannot be read); the checkpointing facts only when
// `for_checkpoint`.
RecordedRun read_run(const std::string& path, bool for_checkpoint);

// The allocation granularity the recorded sizes show: 2 MiB when every device allocation is a
// multiple of it (a caching allocator's segments), 512 B when every one is a multiple of that
// (cudaMalloc-style rounding), otherwise none. A run of a few allocations shows nothing.
int64_t granularity_of(const RecordedRun& run);

}  // namespace tbdprof::analyzer::whatif
