// A scenario's bytes per allocation (docs/whatif.md, "The model", points 2-4): the factors applied
// to each allocation, segments by the categories placed on their bytes, sizes rounded up to the
// recorded granularity, and the pooled tensors' requests for the pool replay.
#pragma once

#include <cstdint>
#include <vector>

#include "whatif_factors.h"
#include "whatif_pool_tensors.h"

namespace tbdprof::analyzer::whatif {

// Each allocation's bytes in the scenario (indices as in run.allocations), and each of `pool_tensors`'
// (the pooled segments' tensors the scenario's pool replay requests) in `pool_bytes`.
std::vector<int64_t> scenario_bytes(const RecordedRun& run, const Model& model, const ScenarioSpec& spec,
                                    const std::vector<PoolTensor>& pool_tensors, std::vector<int64_t>& pool_bytes);

}  // namespace tbdprof::analyzer::whatif
