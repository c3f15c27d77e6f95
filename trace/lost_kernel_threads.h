// Kernel records whose CUPTI correlation record was lost: which thread launched each (internal to the
// builder). CUPTI ties every other kernel to its thread (raw::kThreadCorrelationTag); once the lost ones
// are given to their threads too, each thread's launches pair with its kernels in order.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "raw_process.h"

namespace tbdprof::trace::detail {

// Per thread id, the device kernel records tied to it (indices into raw.device_kernels: 4 B each).
using KernelsOfThread = std::map<uint32_t, std::vector<KernelIndex>>;

// `launches_of_thread`: each thread's launches not joined otherwise, as indices into raw.launches in
// recorded order; `by_thread`: the kernels CUPTI tied to each thread. Moves the records of `lost` whose
// thread is found into `by_thread`; the others stay in `lost`.
void assign_lost_to_threads(const RawProcess& raw,
                            const std::unordered_map<uint32_t, std::vector<LaunchIndex>>& launches_of_thread,
                            KernelsOfThread& by_thread, std::vector<const DeviceKernel*>& lost);

}  // namespace tbdprof::trace::detail
