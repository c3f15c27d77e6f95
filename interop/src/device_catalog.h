// What Kineto's deviceProperties leave out but the trace format wants: the SM clock and FP32 lanes
// per SM, needed for FP32 peak (docs/definitions.md). Lanes follow from the compute capability
// (CUDA C Programming Guide, "Arithmetic Instructions" throughput table); the clock from the
// published boost clock of well-known models. Unknown models get clock 0 (peak unknown).
#pragma once

#include <cstdint>
#include <string_view>

namespace tbdprof::interop {

int64_t fp32_lanes_per_sm(int64_t cc_major, int64_t cc_minor);
// 0 when the model is not in the catalog.
int64_t boost_clock_khz(std::string_view device_name);

}  // namespace tbdprof::interop
