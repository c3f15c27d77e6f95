// Kernels that CUPTI tied to the launching thread rather than to one launch (raw::kThreadCorrelationTag):
// pairing them with that thread's launch records, in order (internal to the builder).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "raw_process.h"

namespace tbdprof::trace::detail {

// A launch paired with a device kernel record, as indices into raw.launches and raw.device_kernels:
// 8 B a pair where an int64_t and a pointer took 16 (held for every kernel of a process).
struct DevicePair {
    LaunchIndex launch;
    KernelIndex device;
};
inline DevicePair device_pair(const RawProcess& raw, LaunchIndex launch, const DeviceKernel* d) {
    return {launch, static_cast<KernelIndex>(d - raw.device_kernels.data())};
}

// The thread a device record belongs to when CUPTI tied it to a thread tag rather than to one of our
// sequence numbers; nullopt otherwise.
std::optional<uint32_t> thread_tag_of(const RawProcess& raw, uint64_t correlation_id);

// Pairs `device` (the kernels tied to one thread, indices into raw.device_kernels, any order) with `host` (that
// thread's launches not joined otherwise, as indices into raw.launches, in recorded order). Paired launches are marked
// in `joined` and appended to `pairs`; device records left over are appended to `orphans`.
void pair_in_thread_order(const RawProcess& raw, const std::vector<LaunchIndex>& host, std::vector<KernelIndex>& device,
                          std::vector<bool>& joined, std::vector<DevicePair>& pairs,
                          std::vector<const DeviceKernel*>& orphans);

// Records whose CUPTI correlation record was lost (a full ring or CUPTI buffer, counted as a drop):
// the device record's CUPTI id maps to nothing, and its host call would stay unpaired too, so the
// work would be stored twice (once host-timed, once as a device record nobody launched). CUPTI ids
// and our sequence numbers both grow in call order, so the pairs that are known cut both into
// intervals: a lost record lies in the interval of the pairs around it, on both sides.
// Record: DeviceKernel (kernels) or raw::RawDeviceActivity (copies and sets).
template <class Record>
struct LostGroup {
    std::vector<int64_t> host;          // indices of unpaired host records, by sequence
    std::vector<const Record*> device;  // lost device records, by CUPTI id
};
// `anchors`: (CUPTI id, sequence) of every known pair; `host`: (sequence, index) of unpaired host
// records. Groups with something on both sides; `unmatched` gets the device records of the others.
template <class Record>
std::vector<LostGroup<Record>> group_lost_by_interval(std::vector<std::pair<uint64_t, uint64_t>> anchors,
                                                      const std::vector<std::pair<uint64_t, int64_t>>& host,
                                                      const std::vector<const Record*>& lost,
                                                      std::vector<const Record*>& unmatched);

// Kernels of `lost` paired, interval by interval, with launches not joined otherwise (same name, not
// before the launch, in order). Marks `joined`, appends to `pairs`; the rest to `orphans`. Returns
// how many were paired.
size_t pair_lost_kernels(const RawProcess& raw, const std::vector<const DeviceKernel*>& lost, std::vector<bool>& joined,
                         std::vector<DevicePair>& pairs, std::vector<const DeviceKernel*>& orphans);

// The last resort, so that nothing is stored twice: lost kernel records still unpaired (in
// `orphans`, those in `lost`) each take an unpaired launch of the same name: the latest made before
// the kernel started, else the first after it. With several threads interleaving, a thread may have
// been given a neighbour's lost record above; the count then stays right while a time may go to the
// launch next to its own. Returns how many were paired.
size_t pair_lost_leftovers(const RawProcess& raw, const std::unordered_set<const DeviceKernel*>& lost,
                           std::vector<bool>& joined, std::vector<DevicePair>& pairs,
                           std::vector<const DeviceKernel*>& orphans);

}  // namespace tbdprof::trace::detail
