#include "raw_process.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

namespace tbdprof::trace::detail {
namespace {

using raw::RecordKind;

void note_time(RawProcess& p, uint64_t host_ns) {
    p.last_host_ns = std::max(p.last_host_ns, host_ns);
}

void decode_string(RawProcess& p, const RawRecordView& r) {
    p.strings[r.as<raw::RawString>().id] = r.string_text();
}

void decode_launch(RawProcess& p, const RawRecordView& r) {
    p.launches.add(r.offset);  // read back from the file when a step needs it
    note_time(p, r.as<raw::RawLaunch>().host_ns);
}

void decode_stack(RawProcess& p, const RawRecordView& r) {
    const auto stack = r.as<raw::RawStack>();
    const auto first = static_cast<uint32_t>(p.stack_ips.size());
    const auto depth = static_cast<uint32_t>(r.append_items<raw::RawStack>(stack.depth, p.stack_ips));
    p.stacks.push_back({stack.id, first, depth});
}

void decode_device_kernel(RawProcess& p, const RawRecordView& r) {
    const auto d = r.as<raw::RawDeviceActivity>();
    p.device_kernels.push_back(
        {d.start_host_ns, d.end_host_ns, d.correlation_id, d.name_string, d.stream_id, d.device, d.context_id});
    note_time(p, d.end_host_ns);
}

template <class T>
void push(std::vector<Event<T>>& into, const RawRecordView& r) {
    into.push_back({r.as<T>(), r.tid, r.offset});
}

// push(), and the record's time (time_ns, a member of the record) noted as the process's latest.
template <class T>
void push_timed(RawProcess& p, std::vector<Event<T>>& into, const RawRecordView& r, uint64_t T::*time_ns) {
    push(into, r);
    note_time(p, into.back().record.*time_ns);
}

void decode_record(RawProcess& p, const RawRecordView& r) {
    switch (r.kind) {
        case RecordKind::String: decode_string(p, r); return;
        case RecordKind::ProcessInfo:
            p.info = r.as<raw::RawProcessInfo>();
            p.has_info = true;
            return;
        case RecordKind::ThreadInfo: push(p.threads, r); return;
        case RecordKind::DeviceInfo: p.devices.push_back(r.as<raw::RawDeviceInfo>()); return;
        case RecordKind::Alloc:
            return push_timed(p, p.allocs, r, &raw::RawAlloc::host_ns);
        case RecordKind::Free:
            return push_timed(p, p.frees, r, &raw::RawFree::host_ns);
        case RecordKind::Launch: decode_launch(p, r); return;
        case RecordKind::Copy:
            return push_timed(p, p.copies, r, &raw::RawCopy::host_ns);
        case RecordKind::Set:
            return push_timed(p, p.sets, r, &raw::RawSet::host_ns);
        case RecordKind::Sync:
            return push_timed(p, p.syncs, r, &raw::RawSync::end_host_ns);
        case RecordKind::LibraryCall:
            return push_timed(p, p.library_calls, r, &raw::RawLibraryCall::end_host_ns);
        case RecordKind::LibraryOperand:
            push(p.library_operands, r);
            return;
        case RecordKind::Range:
            return push_timed(p, p.ranges, r, &raw::RawRange::end_host_ns);
        case RecordKind::MemRegion:
            return push_timed(p, p.memory_regions, r, &raw::RawMemRegion::host_ns);
        case RecordKind::NcclComm:
            return push_timed(p, p.nccl_comms, r, &raw::RawNcclComm::host_ns);
        case RecordKind::GraphCapture:
            return push_timed(p, p.graph_captures, r, &raw::RawGraphCapture::host_ns);
        case RecordKind::GraphInstantiate:
            return push_timed(p, p.graph_instantiations, r, &raw::RawGraphInstantiate::host_ns);
        case RecordKind::GraphLaunch:
            return push_timed(p, p.graph_launches, r, &raw::RawGraphLaunch::host_ns);
        case RecordKind::Stack: decode_stack(p, r); return;
        case RecordKind::Frame: p.frames.push_back(r.as<raw::RawFrame>()); return;
        case RecordKind::DeviceKernel:
            decode_device_kernel(p, r);
            return;
        case RecordKind::DeviceCopy:
            p.device_copies.push_back(r.as<raw::RawDeviceActivity>());
            note_time(p, p.device_copies.back().end_host_ns);
            return;
        case RecordKind::DeviceSet:
            p.device_sets.push_back(r.as<raw::RawDeviceActivity>());
            note_time(p, p.device_sets.back().end_host_ns);
            return;
        case RecordKind::Correlation: {
            const auto c = r.as<raw::RawCorrelation>();
            p.sequence_of_correlation.add(c.correlation_id, c.sequence);
            return;
        }
        case RecordKind::KernelMetric: p.kernel_metrics.push_back(r.as<raw::RawKernelMetric>()); return;
        case RecordKind::CpuSample:
            p.cpu_samples.push_back(r.as<raw::RawCpuSample>());
            note_time(p, p.cpu_samples.back().host_ns);
            return;
        case RecordKind::Dropped: p.dropped.push_back(r.as<raw::RawDropped>()); return;
        case RecordKind::CaptureWindow:
            p.capture_windows.push_back(r.as<raw::RawCaptureWindow>());
            note_time(p, p.capture_windows.back().host_ns);
            return;
        case RecordKind::ProcessEnd:
            p.has_end = true;
            p.end_record = r.as<raw::RawProcessEnd>();
            p.end_reason = p.end_record.reason;
            return;
        case RecordKind::ClockSource:
            p.clock_source = r.as<raw::RawClockSource>();
            p.has_clock_source = true;
            return;
    }
    ++p.unknown_records;  // a newer collector's kind: skipped, as the format allows
}

// The file's pages behind a cursor are dropped every so often: the mapped file adds at most this
// much to the build's resident memory, not its size.
constexpr size_t kResidentWindowBytes = size_t{16} << 20;

void drop_pages_behind(const RawProcess& p, size_t cursor_offset, size_t& dropped_until) {
    if (cursor_offset - dropped_until < 2 * kResidentWindowBytes) return;
    dropped_until = cursor_offset - kResidentWindowBytes;
    p.file.drop_pages_before(dropped_until);
}

// Reserves the per-kernel vectors at their exact size from a first pass over the record headers:
// grown by doubling, each reallocation would hold the old and the new array at once (the decoded
// launches alone up to 3 x 96 B per launch at that moment, the build's peak).
void reserve_kernel_records(RawProcess& p) {
    size_t launches = 0, device_kernels = 0, correlations = 0;
    auto cursor = p.file.records();
    RawRecordView record{};
    size_t dropped_until = 0;
    while (cursor.next(record)) {
        switch (record.kind) {
            case RecordKind::Launch:
                ++launches;
                break;
            case RecordKind::DeviceKernel:
                ++device_kernels;
                break;
            case RecordKind::Correlation:
                ++correlations;
                break;
            default:
                break;
        }
        drop_pages_behind(p, cursor.end_offset(), dropped_until);
    }
    p.file.drop_pages_before(cursor.end_offset());
    // The pairing keeps launches and device records as 4 B indices (LaunchIndex).
    constexpr size_t kMaxRecords = std::numeric_limits<LaunchIndex>::max();
    if (launches > kMaxRecords || device_kernels > kMaxRecords)
        throw std::runtime_error("a process recorded more than " + std::to_string(kMaxRecords) +
                                 " kernel launches or kernel records, more than the build can pair");
    p.launches.reserve(launches);
    p.device_kernels.reserve(device_kernels);
    p.sequence_of_correlation.reserve(correlations);
}

}  // namespace

uint64_t LaunchRecords::offset(size_t i) const {
    uint64_t high = 0;
    if (!high_starts_.empty()) {
        const auto after = std::upper_bound(high_starts_.begin(), high_starts_.end(), i,
                                            [](size_t index, const auto& start) { return index < start.first; });
        if (after != high_starts_.begin()) high = std::prev(after)->second;
    }
    return high << 32 | low_[i];
}

LaunchEvent LaunchRecords::operator[](size_t i) const {
    const RawRecordView r = file_->record_at(offset(i));
    LaunchEvent event{r.as<raw::RawLaunch>(), r.tid, r.offset, nullptr};
    const std::string_view tail = r.tail<raw::RawLaunch>();
    event.record.candidate_count = static_cast<uint16_t>(
        std::min<size_t>(event.record.candidate_count, tail.size() / sizeof(raw::RawPointerCandidate)));
    event.candidate_bytes = reinterpret_cast<const std::byte*>(tail.data());
    note_read(r.offset, r.offset + r.size);
    return event;
}

// The steps read launches mostly in file order (a thread's in the order it made them): the pages
// read back are counted by the 64 KiB a read fault may map around a page (fault-around), and
// dropped once they add up to kResidentBytes, so the mapped file adds a bounded amount to the
// build's resident memory, as while decoding.
void LaunchRecords::note_read(size_t begin, size_t end) const {
    constexpr size_t kFaultBytes = size_t{64} << 10;
    constexpr size_t kResidentBytes = size_t{16} << 20;
    if (begin / kFaultBytes != last_chunk_) {
        last_chunk_ = begin / kFaultBytes;
        resident_bytes_ += kFaultBytes;
    }
    read_begin_ = std::min(read_begin_, begin);
    read_end_ = std::max(read_end_, end);
    if (resident_bytes_ < kResidentBytes) return;
    file_->drop_pages(read_begin_, read_end_);
    read_begin_ = SIZE_MAX;
    read_end_ = resident_bytes_ = 0;
    last_chunk_ = SIZE_MAX;
}

void decode_raw_process(RawProcess& p) {
    reserve_kernel_records(p);
    // Decoded records are copied out, so the file's pages behind the cursor are dropped as it goes.
    auto cursor = p.file.records();
    RawRecordView record{};
    size_t dropped_until = 0;
    while (cursor.next(record)) {
        decode_record(p, record);
        drop_pages_behind(p, cursor.end_offset(), dropped_until);
    }
    p.file.drop_pages_before(cursor.end_offset());
    // One CUPTI id can come with several external ids: work launched through the runtime shares its id
    // with the runtime and the driver API record, and each record brings the external id in force
    // around it. The runtime call's is the thread's tag (ours are pushed inside it, around the driver
    // call, by the driver-level hooks); the driver call's is the sequence number that names the one
    // call. The one that names the call is kept.
    p.sequence_of_correlation.finish([](uint64_t sequence) { return (sequence & raw::kThreadCorrelationTag) == 0; });
    // The kinds grown by doubling: the slack would be held through the build.
    p.device_kernels.shrink_to_fit();
    for (auto* records : {&p.device_copies, &p.device_sets}) records->shrink_to_fit();
    p.end = cursor.end();
    p.end_offset = cursor.end_offset();
    note_time(p, p.file.header().start_host_ns);
}

}  // namespace tbdprof::trace::detail
