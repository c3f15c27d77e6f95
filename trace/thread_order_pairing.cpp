// How the kernels CUPTI tied to a thread are paired with that thread's launches not yet joined, in order:
// CUPTI numbers a thread's calls in the order it made them, and the thread recorded its launches in
// the same order. A pair must name the same kernel and the kernel must not start before its launch;
// otherwise a record was lost on one side (a full ring, a full CUPTI buffer, both counted), and the
// pairing skips, on the side where the nearest match lies, to realign. (The time test keeps a loop's
// repeating names from pairing a launch with an earlier iteration's kernel.) Device records left
// over are orphans; launches without a partner keep host times.
#include "thread_order_pairing.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace tbdprof::trace::detail {
namespace {

// How far ahead the pairing looks for the record that matches after a loss on one side.
constexpr size_t kResyncWindow = 1024;
// A kernel cannot start before it was launched; the clocks agree to within this (CUPTI's clock is
// ours, or its offset to ours was measured once at start).
constexpr uint64_t kClockToleranceNs = 10'000;

// Kernel names as small integers (equal text, equal number), so that realigning after a loss, which
// may compare a record with up to 2 x kResyncWindow others, compares integers rather than strings.
// Numbered by string id as the pairing asks (a hash lookup), not held per kernel (8 B a kernel).
class NameNumbers {
public:
    explicit NameNumbers(const RawProcess& raw) : raw_(raw) {}
    uint32_t of(uint64_t string_id) {
        // A thread's launches and kernels mostly repeat one name: the last answer saves the lookup.
        if (string_id == last_id_ && has_last_) return last_number_;
        auto [it, added] = by_id_.try_emplace(string_id, 0);
        if (added) {
            const auto next = static_cast<uint32_t>(by_text_.size());
            it->second = by_text_.try_emplace(raw_.string(string_id), next).first->second;
        }
        has_last_ = true;
        last_id_ = string_id;
        last_number_ = it->second;
        return it->second;
    }

private:
    const RawProcess& raw_;
    std::unordered_map<uint64_t, uint32_t> by_id_;
    std::unordered_map<std::string_view, uint32_t> by_text_;
    bool has_last_ = false;
    uint64_t last_id_ = 0;
    uint32_t last_number_ = 0;
};

// A device record given as a pointer (a LostGroup's) or as its index (a thread's tied kernels).
const DeviceKernel* kernel_at(const RawProcess&, const DeviceKernel* d) {
    return d;
}
const DeviceKernel* kernel_at(const RawProcess& raw, KernelIndex i) {
    return &raw.device_kernels[i];
}

// One pass of the in-order pairing; `compare_names` off pairs by order and time alone. `host`:
// launch indices (LaunchIndex, or int64_t from a LostGroup); `device`: pointers or KernelIndex.
template <class Index, class Device>
size_t pair_in_order(const RawProcess& raw, const std::vector<Index>& host, const std::vector<Device>& device,
                     NameNumbers& names, bool compare_names, std::vector<DevicePair>& pairs,
                     std::vector<const DeviceKernel*>& orphans) {
    auto same = [&](size_t h, size_t d) {
        const raw::RawLaunch launch = raw.launches[static_cast<size_t>(host[h])].record;
        const DeviceKernel* kernel = kernel_at(raw, device[d]);
        return kernel->start_host_ns + kClockToleranceNs >= launch.host_ns &&
               (!compare_names || names.of(launch.name_string) == names.of(kernel->name_string));
    };
    size_t h = 0, d = 0, paired = 0;
    while (h < host.size() && d < device.size()) {
        if (same(h, d)) {
            pairs.push_back(device_pair(raw, static_cast<LaunchIndex>(host[h++]), kernel_at(raw, device[d++])));
            ++paired;
            continue;
        }
        size_t skip_device = 0, skip_host = 0;
        for (size_t k = 1; k <= kResyncWindow && skip_device == 0 && d + k < device.size(); ++k) {
            if (same(h, d + k)) skip_device = k;
        }
        for (size_t k = 1; k <= kResyncWindow && skip_host == 0 && h + k < host.size(); ++k) {
            if (same(h + k, d)) skip_host = k;
        }
        if (skip_device != 0 && (skip_host == 0 || skip_device <= skip_host)) {
            for (size_t k = 0; k < skip_device; ++k) orphans.push_back(kernel_at(raw, device[d++]));
        } else if (skip_host != 0) {
            h += skip_host;
        } else {
            orphans.push_back(kernel_at(raw, device[d++]));
            ++h;
        }
    }
    while (d < device.size()) orphans.push_back(kernel_at(raw, device[d++]));
    return paired;
}

}  // namespace

// The thread a device record belongs to when CUPTI tied it to a thread tag (kernel launches, see
// raw::kThreadCorrelationTag) rather than to one of our sequence numbers.
std::optional<uint32_t> thread_tag_of(const RawProcess& raw, uint64_t correlation_id) {
    auto seq = raw.sequence_of_correlation.find(correlation_id);
    if (seq == raw.sequence_of_correlation.end() || (seq->second & raw::kThreadCorrelationTag) == 0)
        return std::nullopt;
    return static_cast<uint32_t>(seq->second);
}

// `host`: the thread's launches not joined otherwise, in the order it recorded them. Names are the
// check that keeps the pairing aligned; should a CUPTI spell kernel names differently from
// cuFuncGetName (never seen on the simulated GPU, not yet checked on a real one), so that names pair
// under half of what they could, the pairing falls back to order and time alone rather than leave
// every kernel of the run without device times.
void pair_in_thread_order(const RawProcess& raw, const std::vector<LaunchIndex>& host, std::vector<KernelIndex>& device,
                          std::vector<bool>& joined, std::vector<DevicePair>& pairs,
                          std::vector<const DeviceKernel*>& orphans) {
    std::sort(device.begin(), device.end(), [&](KernelIndex a, KernelIndex b) {
        return raw.device_kernels[a].correlation_id < raw.device_kernels[b].correlation_id;
    });
    // Appended to `pairs` in place (no second list of a thread's pairs), taken back for the fallback.
    const size_t pairs_before = pairs.size();
    std::vector<const DeviceKernel*> left;
    const size_t possible = std::min(host.size(), device.size());
    NameNumbers names(raw);
    if (pair_in_order(raw, host, device, names, true, pairs, left) * 2 < possible) {
        pairs.resize(pairs_before);
        left.clear();
        pair_in_order(raw, host, device, names, false, pairs, left);
    }
    for (size_t i = pairs_before; i < pairs.size(); ++i) joined[pairs[i].launch] = true;
    orphans.insert(orphans.end(), left.begin(), left.end());
}

template <class Record>
std::vector<LostGroup<Record>> group_lost_by_interval(std::vector<std::pair<uint64_t, uint64_t>> anchors,
                                                      const std::vector<std::pair<uint64_t, int64_t>>& host,
                                                      const std::vector<const Record*>& lost,
                                                      std::vector<const Record*>& unmatched) {
    // The anchors' CUPTI ids and sequences, each sorted: interval k lies between the k-th and the
    // (k+1)-th of either.
    std::vector<uint64_t> ids, sequences;
    ids.reserve(anchors.size());
    sequences.reserve(anchors.size());
    for (const auto& [id, sequence] : anchors) {
        ids.push_back(id);
        sequences.push_back(sequence);
    }
    std::sort(ids.begin(), ids.end());
    std::sort(sequences.begin(), sequences.end());
    std::unordered_map<size_t, LostGroup<Record>> by_interval;
    for (const Record* d : lost) {
        const size_t k = static_cast<size_t>(std::upper_bound(ids.begin(), ids.end(), d->correlation_id) - ids.begin());
        by_interval[k].device.push_back(d);
    }
    std::vector<std::pair<uint64_t, int64_t>> by_sequence = host;
    std::sort(by_sequence.begin(), by_sequence.end());
    for (const auto& [sequence, index] : by_sequence) {
        const size_t k =
            static_cast<size_t>(std::upper_bound(sequences.begin(), sequences.end(), sequence) - sequences.begin());
        if (auto it = by_interval.find(k); it != by_interval.end()) it->second.host.push_back(index);
    }
    std::vector<LostGroup<Record>> groups;
    for (auto& [k, group] : by_interval) {
        std::sort(group.device.begin(), group.device.end(),
                  [](const auto* a, const auto* b) { return a->correlation_id < b->correlation_id; });
        if (group.host.empty()) {
            unmatched.insert(unmatched.end(), group.device.begin(), group.device.end());
            continue;
        }
        groups.push_back(std::move(group));
    }
    return groups;
}

template std::vector<LostGroup<DeviceKernel>> group_lost_by_interval(std::vector<std::pair<uint64_t, uint64_t>>,
                                                                     const std::vector<std::pair<uint64_t, int64_t>>&,
                                                                     const std::vector<const DeviceKernel*>&,
                                                                     std::vector<const DeviceKernel*>&);
template std::vector<LostGroup<raw::RawDeviceActivity>> group_lost_by_interval(
    std::vector<std::pair<uint64_t, uint64_t>>, const std::vector<std::pair<uint64_t, int64_t>>&,
    const std::vector<const raw::RawDeviceActivity*>&, std::vector<const raw::RawDeviceActivity*>&);

size_t pair_lost_kernels(const RawProcess& raw, const std::vector<const DeviceKernel*>& lost, std::vector<bool>& joined,
                         std::vector<DevicePair>& pairs, std::vector<const DeviceKernel*>& orphans) {
    if (lost.empty()) return 0;
    std::vector<std::pair<uint64_t, uint64_t>> anchors;
    anchors.reserve(pairs.size());
    for (const auto& [launch, d] : pairs)
        anchors.emplace_back(raw.device_kernels[d].correlation_id, raw.launches[launch].record.sequence);
    std::vector<std::pair<uint64_t, int64_t>> host;
    for (size_t i = 0; i < raw.launches.size(); ++i) {
        if (!joined[i]) host.emplace_back(raw.launches[i].record.sequence, static_cast<int64_t>(i));
    }
    size_t paired = 0;
    for (const auto& group : group_lost_by_interval(std::move(anchors), host, lost, orphans)) {
        std::vector<DevicePair> found;
        NameNumbers names(raw);
        paired += pair_in_order(raw, group.host, group.device, names, true, found, orphans);
        for (const DevicePair& pair : found) joined[pair.launch] = true;
        pairs.insert(pairs.end(), found.begin(), found.end());
    }
    return paired;
}

size_t pair_lost_leftovers(const RawProcess& raw, const std::unordered_set<const DeviceKernel*>& lost,
                           std::vector<bool>& joined, std::vector<DevicePair>& pairs,
                           std::vector<const DeviceKernel*>& orphans) {
    std::vector<const DeviceKernel*> leftover, others;
    for (const DeviceKernel* d : orphans) (lost.contains(d) ? leftover : others).push_back(d);
    if (leftover.empty()) return 0;
    // Unpaired launches by name, each list in launch time order.
    std::unordered_map<std::string_view, std::vector<size_t>> unpaired;
    for (size_t i = 0; i < raw.launches.size(); ++i)
        if (!joined[i]) unpaired[raw.string(raw.launches[i].record.name_string)].push_back(i);
    for (auto& [name, launches] : unpaired)
        std::stable_sort(launches.begin(), launches.end(), [&](size_t a, size_t b) {
            return raw.launches[a].record.host_ns < raw.launches[b].record.host_ns;
        });
    std::sort(leftover.begin(), leftover.end(),
              [](const auto* a, const auto* b) { return a->start_host_ns < b->start_host_ns; });
    size_t paired = 0;
    for (const DeviceKernel* d : leftover) {
        auto it = unpaired.find(raw.string(d->name_string));
        std::vector<size_t>* launches = it == unpaired.end() ? nullptr : &it->second;
        // The latest launch not after the kernel's start: the first one after it, minus one.
        const auto after =
            launches == nullptr
                ? std::vector<size_t>::iterator{}
                : std::upper_bound(launches->begin(), launches->end(), d->start_host_ns + kClockToleranceNs,
                                   [&](uint64_t t, size_t i) { return t < raw.launches[i].record.host_ns; });
        if (launches == nullptr || launches->empty()) {
            others.push_back(d);
            continue;
        }
        // None before it: its own launch went to a neighbour's kernel; the first one after it is
        // left over for it (the row then has no queue time, see take_device_record).
        const auto chosen = after == launches->begin() ? after : std::prev(after);
        const size_t launch = *chosen;
        launches->erase(chosen);
        joined[launch] = true;
        pairs.push_back(device_pair(raw, static_cast<LaunchIndex>(launch), d));
        ++paired;
    }
    orphans = std::move(others);
    return paired;
}

}  // namespace tbdprof::trace::detail
