// Kernels that CUPTI tied to the launching thread rather than to one launch (raw::kThreadCorrelationTag):
// pairing them with that thread's launch records, in order (internal to the builder).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "raw_process.h"

namespace tbdprof::trace::detail {

using DevicePair = std::pair<int64_t, const raw::RawDeviceActivity*>;  // launch index, device record

// The thread a device record belongs to when CUPTI tied it to a thread tag rather than to one of our
// sequence numbers; nullopt otherwise.
std::optional<uint32_t> thread_tag_of(const RawProcess& raw, uint64_t correlation_id);

// Pairs `device` (the kernels tied to one thread, any order) with `host` (that thread's launches not
// joined otherwise, as indices into raw.launches, in recorded order). Paired launches are marked in
// `joined` and appended to `pairs`; device records left over are appended to `orphans`.
void pair_in_thread_order(const RawProcess& raw, const std::vector<int64_t>& host,
                          std::vector<const raw::RawDeviceActivity*>& device, std::vector<bool>& joined,
                          std::vector<DevicePair>& pairs, std::vector<const raw::RawDeviceActivity*>& orphans);

}  // namespace tbdprof::trace::detail
