// Model building: kernels, copies and sets. A host record (launch, copy, set) and CUPTI's device
// record of the same work are joined through RawCorrelation (CUPTI correlation id -> our sequence).
// Work with no device record is kept with host timestamps (duration NULL); device records with no
// host record (e.g. work the hooks did not see) are kept with what CUPTI knows.
#include "kernel_stage.h"
#include "lost_kernel_threads.h"
#include "model_builder.h"
#include "tbdprof/trace/tables.h"
#include "thread_order_pairing.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace tbdprof::trace::detail {
namespace {

// The raw format's copy kinds as the trace names them (tables.h: one list of names).
std::string_view copy_kind_name(uint8_t kind) {
    switch (static_cast<raw::CopyKind>(kind)) {
        case raw::CopyKind::HostToDevice: return trace::copy_kind_name(CopyKind::htod);
        case raw::CopyKind::DeviceToHost: return trace::copy_kind_name(CopyKind::dtoh);
        case raw::CopyKind::DeviceToDevice: return trace::copy_kind_name(CopyKind::dtod);
        case raw::CopyKind::HostToHost: return trace::copy_kind_name(CopyKind::htoh);
        case raw::CopyKind::Default: return trace::copy_kind_name(CopyKind::default_direction);
    }
    return trace::copy_kind_name(CopyKind::unknown);
}

std::optional<std::string_view> api_name(raw::ApiPath api) {
    switch (api) {
        case raw::ApiPath::Runtime: return "runtime";
        case raw::ApiPath::Driver: return "driver";
        case raw::ApiPath::DriverViaProcAddress: return "driver_proc_address";
        case raw::ApiPath::Library: return "library";
    }
    return std::nullopt;
}

// Index of the host record whose sequence the device record's correlation id maps to, or -1.
template <class Map>
int64_t host_index(const RawProcess& raw, const Map& index_of_sequence, uint64_t correlation_id) {
    auto seq = raw.sequence_of_correlation.find(correlation_id);
    if (seq == raw.sequence_of_correlation.end()) return -1;
    auto it = index_of_sequence.find(seq->second);
    return it == index_of_sequence.end() ? -1 : static_cast<int64_t>(it->second);
}

// Copies and sets whose correlation record was lost (thread_order_pairing.h), interval by interval:
// a device record pairs with the next unpaired host record of the same size that it does not precede.
template <class HostRecords>
void pair_lost_transfers(const HostRecords& host, const std::vector<const raw::RawDeviceActivity*>& lost,
                         std::vector<const raw::RawDeviceActivity*>& paired,
                         std::vector<const raw::RawDeviceActivity*>& orphans, uint64_t& count) {
    if (lost.empty()) return;
    constexpr uint64_t kClockToleranceNs = 10'000;
    std::vector<std::pair<uint64_t, uint64_t>> anchors;
    std::vector<std::pair<uint64_t, int64_t>> unpaired;
    for (size_t i = 0; i < host.size(); ++i) {
        if (paired[i] != nullptr)
            anchors.emplace_back(paired[i]->correlation_id, host[i].record.sequence);
        else if (host[i].record.captured == 0)
            unpaired.emplace_back(host[i].record.sequence, static_cast<int64_t>(i));
    }
    for (const auto& group : group_lost_by_interval(std::move(anchors), unpaired, lost, orphans)) {
        size_t h = 0;
        for (const raw::RawDeviceActivity* d : group.device) {
            size_t k = h;
            while (k < group.host.size()) {
                const auto& r = host[static_cast<size_t>(group.host[k])].record;
                if (r.bytes == d->bytes && d->start_host_ns + kClockToleranceNs >= r.host_ns) break;
                ++k;
            }
            if (k == group.host.size()) {
                orphans.push_back(d);
                continue;
            }
            paired[static_cast<size_t>(group.host[k])] = d;
            h = k + 1;
            ++count;
        }
    }
}

// Pairs each host record with the device record CUPTI correlated to it (by our sequence number);
// device records no host record claims are appended to `orphans`.
template <class HostRecords>
std::vector<const raw::RawDeviceActivity*> pair_device_records(const RawProcess& raw, const HostRecords& host,
                                                               const std::vector<raw::RawDeviceActivity>& device,
                                                               std::vector<const raw::RawDeviceActivity*>& orphans,
                                                               uint64_t& paired_without_correlation) {
    std::unordered_map<uint64_t, uint32_t> of_sequence;
    for (uint32_t i = 0; i < host.size(); ++i) of_sequence[host[i].record.sequence] = i;
    std::vector<const raw::RawDeviceActivity*> paired(host.size(), nullptr), lost;
    for (const raw::RawDeviceActivity& d : device) {
        const int64_t i = host_index(raw, of_sequence, d.correlation_id);
        if (i >= 0 && paired[static_cast<size_t>(i)] == nullptr) {
            paired[static_cast<size_t>(i)] = &d;
            continue;
        }
        // A copy or set is named by its sequence, never by a thread: an id that maps to a thread's tag
        // only kept the runtime call's correlation (the driver call's was dropped), and pairs by order.
        const auto seq = raw.sequence_of_correlation.find(d.correlation_id);
        const bool named = seq != raw.sequence_of_correlation.end() && (seq->second & raw::kThreadCorrelationTag) == 0;
        if (i < 0 && !named)
            lost.push_back(&d);
        else
            orphans.push_back(&d);
    }
    pair_lost_transfers(host, lost, paired, orphans, paired_without_correlation);
    return paired;
}

// Sorts rows by start (then process, then whatever order they were made in) and numbers them; returns
// each row's new position. The rows are permuted in place (no second copy of the table in memory).
template <class Row>
std::vector<size_t> sort_and_number(std::vector<Row>& rows) {
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto before = [&](size_t a, size_t b) {
        return rows[a].start_ns != rows[b].start_ns ? rows[a].start_ns < rows[b].start_ns
                                                    : rows[a].process < rows[b].process;
    };
    // Rows of one stream arrive in start order: most tables need no sort at all.
    if (!std::is_sorted(order.begin(), order.end(), before)) std::stable_sort(order.begin(), order.end(), before);
    std::vector<size_t> new_position(rows.size());
    for (size_t i = 0; i < order.size(); ++i) new_position[order[i]] = i;
    // order[i] is the old index of the row that goes to position i: follow each cycle once, marking
    // a placed position by order[i] == i.
    for (size_t start = 0; start < order.size(); ++start) {
        if (order[start] == start) continue;
        Row carried = std::move(rows[start]);
        size_t at = start;
        while (order[at] != start) {
            const size_t from = order[at];
            rows[at] = std::move(rows[from]);
            order[at] = at;
            at = from;
        }
        rows[at] = std::move(carried);
        order[at] = at;
    }
    for (size_t i = 0; i < rows.size(); ++i) rows[i].id = static_cast<int64_t>(i) + 1;
    return new_position;
}

// A copy's or set's times: the device's when CUPTI saw the work (and its CUPTI stream id is learnt),
// the host's otherwise. Returns whether the device timed it.
template <class Row>
bool take_transfer_times(ProcessContext& p, Row& row, const raw::RawDeviceActivity* d, uint64_t host_ns,
                         uint64_t run_start) {
    if (d == nullptr) {
        row.start_ns = static_cast<int64_t>(host_ns - run_start);
        row.queued_ns = 0;
        return false;
    }
    row.start_ns = static_cast<int64_t>(d->start_host_ns - run_start);
    row.duration_ns = static_cast<int64_t>(d->end_host_ns - d->start_host_ns);
    row.queued_ns = static_cast<int64_t>(d->start_host_ns - host_ns);
    row.correlation = static_cast<int64_t>(d->correlation_id);
    if (row.stream) p.stream_of_cupti.try_emplace(d->stream_id, *row.stream);
    return true;
}

// A copy or set row for a device record nobody launched: its stream only when a joined record
// taught the CUPTI stream id.
template <class Row>
Row orphan_transfer_row(const ProcessContext& p, const raw::RawDeviceActivity& d, uint64_t run_start) {
    Row row;
    row.process = p.id;
    row.device = d.device;
    if (auto s = p.stream_of_cupti.find(d.stream_id); s != p.stream_of_cupti.end()) row.stream = s->second;
    row.bytes = static_cast<int64_t>(d.bytes);
    row.start_ns = static_cast<int64_t>(d.start_host_ns - run_start);
    row.duration_ns = static_cast<int64_t>(d.end_host_ns - d.start_host_ns);
    row.correlation = static_cast<int64_t>(d.correlation_id);
    return row;
}

}  // namespace

KernelRow ModelBuilder::launch_row(ProcessContext& p, const LaunchEvent& l) {
    KernelRow row;
    row.process = p.id;
    row.thread = thread_id(p, l.tid);
    row.device = l.record.device;
    row.stream = stream_id(p, l.record.stream, l.record.device);
    row.function = function_id(p.raw->string(l.record.name_string));
    row.start_ns = rel(l.record.host_ns);
    row.queued_ns = 0;
    row.grid = pack_dimensions(l.record.grid);
    row.block = pack_dimensions(l.record.block);
    row.shared_bytes = l.record.shared_mem_bytes;
    row.library_call = library_call_of(p, l.tid, l.record.sequence);
    return row;
}

void ModelBuilder::take_device_record(ProcessContext& p, KernelRow& row, const DeviceKernel& d,
                                      std::optional<uint64_t> launch_ns) {
    row.device = d.device;
    if (row.stream) {
        p.stream_of_cupti.try_emplace(d.stream_id, *row.stream);
    } else if (auto s = p.stream_of_cupti.find(d.stream_id); s != p.stream_of_cupti.end()) {
        row.stream = s->second;
    }
    row.start_ns = rel(d.start_host_ns);
    row.duration_ns = static_cast<int64_t>(d.end_host_ns - d.start_host_ns);
    // A kernel does not start before its launch (beyond the clocks' 10 us): a pair made without its
    // correlation record may be a neighbour's launch (thread_order_pairing.h); no queue time then.
    constexpr uint64_t kClockToleranceNs = 10'000;
    const bool in_order = launch_ns && d.start_host_ns + kClockToleranceNs >= *launch_ns;
    row.queued_ns = in_order ? Opt(static_cast<int64_t>(d.start_host_ns - *launch_ns)) : Opt();
    row.correlation = static_cast<int64_t>(d.correlation_id);
}

// One process's device kernel records sorted out against its launches: the pairs (by correlation,
// by thread order, or placed among the known pairs when their correlation record was lost), the
// records of graph replays, and the orphans no launch claims.
struct KernelPairing {
    std::vector<bool> joined;  // per launch: paired, or captured (it did not run)
    std::vector<DevicePair> pairs;
    std::vector<const DeviceKernel*> orphans;
    std::map<uint32_t, std::vector<const DeviceKernel*>> by_graph_launch;
};

// Kernel records CUPTI tied to their launching thread (raw::kThreadCorrelationTag; normally all of
// them), found while the correlation index is whole: each keeps its thread (DeviceKernel::thread)
// and their correlation entries leave the index (16 B a kernel), before the pairing makes its
// per-kernel lists. Nothing reads those entries later: a copy's or set's device record with the same
// CUPTI id (never seen) keeps its entry, and with kernel metrics (--metrics), whose join reads the
// index, it stays whole. Returns, per device record, whether it is tied.
std::vector<bool> ModelBuilder::find_thread_tied_kernels(ProcessContext& p) {
    RawProcess& raw = *p.raw;
    auto& index = raw.sequence_of_correlation;
    std::vector<bool> tied(raw.device_kernels.size(), false), taken(index.size(), false);
    for (size_t i = 0; i < raw.device_kernels.size(); ++i) {
        DeviceKernel& d = raw.device_kernels[i];
        const auto* seq = index.find(d.correlation_id);
        if (seq == index.end() || (seq->second & raw::kThreadCorrelationTag) == 0) continue;
        // The pairing's order: a graph replay's or one launch's record first (normally never).
        if (graph_launch_of(p, d.correlation_id) >= 0 || host_index(raw, p.launch_of_sequence, d.correlation_id) >= 0)
            continue;
        tied[i] = true;
        d.thread = static_cast<uint32_t>(seq->second);
        taken[index.position(seq)] = true;
    }
    if (!raw.kernel_metrics.empty()) return tied;
    for (const auto* records : {&raw.device_copies, &raw.device_sets}) {
        for (const raw::RawDeviceActivity& d : *records)
            if (const auto* e = index.find(d.correlation_id); e != index.end()) taken[index.position(e)] = false;
    }
    index.erase_marked(taken);
    return tied;
}

namespace {

// Each thread's launches not joined otherwise, in recorded order. Each list is reserved at its size
// first: grown by doubling, a thread's list of (normally) every launch would hold up to twice its
// 4 B a launch at the pairing's peak.
std::unordered_map<uint32_t, std::vector<LaunchIndex>> unjoined_launches_of_threads(const RawProcess& raw,
                                                                                    const std::vector<bool>& joined) {
    std::unordered_map<uint32_t, size_t> count;
    for (LaunchIndex i = 0; i < raw.launches.size(); ++i)
        if (!joined[i]) ++count[raw.launches[i].tid];
    std::unordered_map<uint32_t, std::vector<LaunchIndex>> of_thread;
    for (const auto& [tid, n] : count) of_thread[tid].reserve(n);
    for (LaunchIndex i = 0; i < raw.launches.size(); ++i)
        if (!joined[i]) of_thread[raw.launches[i].tid].push_back(i);
    return of_thread;
}

// The tied kernel records' lists, reserved at their size for the same reason.
KernelsOfThread reserved_kernels_of_threads(const RawProcess& raw, const std::vector<bool>& tied) {
    std::map<uint32_t, size_t> count;
    for (size_t i = 0; i < tied.size(); ++i)
        if (tied[i]) ++count[raw.device_kernels[i].thread];
    KernelsOfThread of_thread;
    for (const auto& [tid, n] : count) of_thread[tid].reserve(n);
    return of_thread;
}

}  // namespace

KernelPairing ModelBuilder::pair_kernels(ProcessContext& p) {
    const std::vector<bool> tied = find_thread_tied_kernels(p);
    const RawProcess& raw = *p.raw;
    KernelPairing k;
    // Captured launches did not run: they never pair with a device record nor become host-timed rows.
    k.joined.assign(raw.launches.size(), false);
    // Each pair takes a launch and a device record of its own: reserved once at its largest.
    k.pairs.reserve(std::min(raw.launches.size(), raw.device_kernels.size()));
    for (size_t i = 0; i < raw.launches.size(); ++i) k.joined[i] = raw.launches[i].record.captured != 0;
    std::vector<const DeviceKernel*> lost;
    KernelsOfThread by_thread = reserved_kernels_of_threads(raw, tied);  // ordered: a stable result
    for (size_t di = 0; di < raw.device_kernels.size(); ++di) {
        const DeviceKernel& d = raw.device_kernels[di];
        if (tied[di]) {
            by_thread[d.thread].push_back(static_cast<KernelIndex>(di));
            continue;
        }
        if (const int64_t gi = graph_launch_of(p, d.correlation_id); gi >= 0) {
            k.by_graph_launch[static_cast<uint32_t>(gi)].push_back(&d);
            continue;
        }
        const int64_t li = host_index(raw, p.launch_of_sequence, d.correlation_id);
        if (li >= 0 && !k.joined[static_cast<size_t>(li)]) {
            k.joined[static_cast<size_t>(li)] = true;
            k.pairs.push_back(device_pair(raw, static_cast<LaunchIndex>(li), &d));
        } else if (auto tag = thread_tag_of(raw, d.correlation_id); li < 0 && tag) {
            by_thread[*tag].push_back(static_cast<KernelIndex>(di));
        } else if (li < 0 && !raw.sequence_of_correlation.contains(d.correlation_id)) {
            lost.push_back(&d);  // its correlation record was dropped
        } else {
            k.orphans.push_back(&d);
        }
    }
    const std::unordered_set<const DeviceKernel*> lost_records(lost.begin(), lost.end());
    auto launches_of_thread = unjoined_launches_of_threads(raw, k.joined);
    assign_lost_to_threads(raw, launches_of_thread, by_thread, lost);
    if (!by_thread.empty()) {
        for (auto& [tid, device] : by_thread) {
            pair_in_thread_order(raw, launches_of_thread[tid], device, k.joined, k.pairs, k.orphans);
        }
    }
    // After the pairs that are known: they bound where each lost one can lie.
    pair_lost_kernels(raw, lost, k.joined, k.pairs, k.orphans);
    pair_lost_leftovers(raw, lost_records, k.joined, k.pairs, k.orphans);
    for (const auto& [li, d] : k.pairs)
        counters_.paired_without_correlation += lost_records.contains(&raw.device_kernels[d]) ? 1 : 0;
    return k;
}

// The rows of one process: paired launches (device-timed), graph replays, launches without a device
// record (host-timed), then device records nobody launched. Each goes to the kernel stage with what
// it came from (kernel_origin), so its id can be found once the rows are numbered.
void ModelBuilder::add_kernel_rows(ProcessContext& p, KernelPairing& k) {
    RawProcess& raw = *p.raw;
    KernelStage& stage = *model_.kernel_stage;
    for (const auto& [li, d] : k.pairs) {
        const LaunchEvent& l = raw.launches[li];
        KernelRow row = launch_row(p, l);
        take_device_record(p, row, raw.device_kernels[d], l.record.host_ns);
        stage.add_kernel(row, li);
        ++device_timed_;
    }
    add_replayed_kernels(p, k.by_graph_launch);
    for (uint32_t i = 0; i < raw.launches.size(); ++i) {
        if (k.joined[i]) continue;
        stage.add_kernel(launch_row(p, raw.launches[i]), i);
        ++host_timed_;
    }
    for (const DeviceKernel* d : k.orphans) {
        KernelRow row;
        row.process = p.id;
        row.function = function_id(raw.string(d->name_string));
        take_device_record(p, row, *d, std::nullopt);
        stage.add_kernel(row, KernelStage::kNoOrigin);
        ++device_timed_;
        ++counters_.orphan_device_records;
    }
}

// The launches by sequence, for the device records CUPTI correlated to one launch (pair_kernels looks
// them up by the sequence their correlation gives). Kernel launches are usually tied to their thread
// instead (raw::kThreadCorrelationTag): when no kernel record outside graph replays maps to a plain
// sequence, every lookup is of a tagged value, which only a launch whose sequence carries the tag
// could answer, so only those (normally none) are indexed: the same lookups, without 16 B a launch.
void ModelBuilder::index_launches_by_sequence(ProcessContext& p) {
    const RawProcess& raw = *p.raw;
    bool plain_lookups = false;
    for (const DeviceKernel& d : raw.device_kernels) {
        const auto seq = raw.sequence_of_correlation.find(d.correlation_id);
        if (seq == raw.sequence_of_correlation.end() || (seq->second & raw::kThreadCorrelationTag) != 0) continue;
        if (graph_launch_of(p, d.correlation_id) >= 0) continue;  // looked up among graph launches only
        plain_lookups = true;
        break;
    }
    if (plain_lookups) p.launch_of_sequence.reserve(raw.launches.size());
    for (uint32_t i = 0; i < raw.launches.size(); ++i) {
        const uint64_t sequence = raw.launches[i].record.sequence;
        if (plain_lookups || (sequence & raw::kThreadCorrelationTag) != 0) p.launch_of_sequence.add(sequence, i);
    }
    p.launch_of_sequence.finish();
}

void ModelBuilder::build_kernels() {
    for (ProcessContext& p : contexts_) {
        RawProcess& raw = *p.raw;
        const size_t correlations = raw.sequence_of_correlation.size();  // the pairing takes kernels' out
        index_launches_by_sequence(p);
        KernelPairing pairing = pair_kernels(p);
        p.launch_of_sequence = {};  // read by the pairing only
        add_kernel_rows(p, pairing);
        counters_.events += raw.launches.size() + raw.device_kernels.size() + correlations;
        if (raw.kernel_metrics.empty()) release(raw.device_kernels);  // every one is in a row now
    }
    // Numbered in start order by the stage; the edges (the allocation sweep) need each launch's id.
    // Made now, not before the pairing: it is not held at the pairing's peak.
    for (ProcessContext& p : contexts_) p.kernel_of_launch.assign(p.raw->launches.size(), 0);
    model_.kernel_stage->for_each_kernel([&](const KernelRow& row, int64_t origin) {
        ProcessContext& p = contexts_[static_cast<size_t>(row.process - 1)];
        if (origin >= 0) p.kernel_of_launch[static_cast<size_t>(origin)] = row.id;
        if (origin <= kReplayOrigin) p.replayed_kernels[static_cast<size_t>(kReplayOrigin - origin)].kernel = row.id;
    });
}

void ModelBuilder::build_copies(ProcessContext& p, const std::vector<const raw::RawDeviceActivity*>& device_of_copy) {
    const RawProcess& raw = *p.raw;
    for (size_t i = 0; i < raw.copies.size(); ++i) {
        const raw::RawCopy& c = raw.copies[i].record;
        if (c.captured != 0) continue;  // a graph node: it ran only in the graph's replays
        const raw::RawDeviceActivity* d = device_of_copy[i];
        CopyRow row;
        row.process = p.id;
        row.thread = thread_id(p, raw.copies[i].tid);
        row.device = c.device;
        row.stream = stream_id(p, c.stream, c.device);
        // cudaMemcpyDefault: the device record knows the direction the driver chose.
        const bool resolved = c.copy_kind == raw::CopyKind::Default && d != nullptr && d->copy_kind != 0;
        row.kind = copy_kind_name(resolved ? d->copy_kind : static_cast<uint8_t>(c.copy_kind));
        row.bytes = static_cast<int64_t>(c.bytes);
        row.src = static_cast<int64_t>(c.src);
        row.dst = static_cast<int64_t>(c.dst);
        row.async = c.async;
        row.api = api_name(c.api);
        ++(take_transfer_times(p, row, d, c.host_ns, run_start_) ? device_timed_ : host_timed_);
        model_.copies.push_back(row);
    }
}

void ModelBuilder::build_sets(ProcessContext& p, const std::vector<const raw::RawDeviceActivity*>& device_of_set) {
    const RawProcess& raw = *p.raw;
    for (size_t i = 0; i < raw.sets.size(); ++i) {
        const raw::RawSet& s = raw.sets[i].record;
        if (s.captured != 0) continue;
        const raw::RawDeviceActivity* d = device_of_set[i];
        SetRow row;
        row.process = p.id;
        row.thread = thread_id(p, raw.sets[i].tid);
        row.device = s.device;
        row.stream = stream_id(p, s.stream, s.device);
        row.value = s.value;
        row.bytes = static_cast<int64_t>(s.bytes);
        row.dst = static_cast<int64_t>(s.dst);
        row.async = s.async;
        row.api = api_name(s.api);
        ++(take_transfer_times(p, row, d, s.host_ns, run_start_) ? device_timed_ : host_timed_);
        model_.sets.push_back(row);
    }
}

void ModelBuilder::build_copies_and_sets() {
    for (ProcessContext& p : contexts_) {
        RawProcess& raw = *p.raw;
        std::vector<const raw::RawDeviceActivity*> copy_orphans, set_orphans;
        const auto device_of_copy =
            pair_device_records(raw, raw.copies, raw.device_copies, copy_orphans, counters_.paired_without_correlation);
        const auto device_of_set =
            pair_device_records(raw, raw.sets, raw.device_sets, set_orphans, counters_.paired_without_correlation);
        build_copies(p, device_of_copy);
        build_sets(p, device_of_set);
        // Copies and sets of graph replays: rows of the replay's thread (build_graphs.cpp).
        const size_t replayed = add_replayed_transfers(p, copy_orphans, set_orphans);
        // Device records nobody launched, after the joined ones so their CUPTI stream ids are known.
        for (const raw::RawDeviceActivity* d : copy_orphans) {
            CopyRow row = orphan_transfer_row<CopyRow>(p, *d, run_start_);
            row.kind = copy_kind_name(d->copy_kind);
            model_.copies.push_back(row);
        }
        for (const raw::RawDeviceActivity* d : set_orphans)
            model_.sets.push_back(orphan_transfer_row<SetRow>(p, *d, run_start_));
        device_timed_ += static_cast<int64_t>(copy_orphans.size() + set_orphans.size() + replayed);
        counters_.orphan_device_records += copy_orphans.size() + set_orphans.size();
        counters_.events += raw.copies.size() + raw.sets.size() + raw.device_copies.size() + raw.device_sets.size();
    }
    sort_and_number(model_.copies);
    sort_and_number(model_.sets);
    // Every device record is now in a row. Only kernel metrics (recorded with --metrics) still
    // look device kernel records and correlations up; the rest is freed.
    for (ProcessContext& p : contexts_) {
        RawProcess& raw = *p.raw;
        release(raw.device_copies);
        release(raw.device_sets);
        if (raw.kernel_metrics.empty()) raw.sequence_of_correlation = {};
    }
}

std::optional<std::string_view> api_name_of(raw::ApiPath api) { return api_name(api); }
std::string_view copy_kind_name_of(uint8_t kind) { return copy_kind_name(kind); }

}  // namespace tbdprof::trace::detail
