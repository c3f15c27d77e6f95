#include "raw_file_writer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tbdprof::test {

using raw::RecordKind;

RawFileWriter::RawFileWriter(uint32_t pid, uint64_t start_ns, uint32_t parent_pid) : pid_(pid) {
    raw::RawFileHeader header{};
    std::memcpy(header.magic, raw::kMagic, sizeof header.magic);
    header.version = raw::kVersion;
    header.pid = pid;
    header.parent_pid = parent_pid;
    header.start_host_ns = start_ns;
    header.start_unix_ns = 1'700'000'000'000'000'000ull + start_ns;
    bytes_.resize(sizeof header);
    std::memcpy(bytes_.data(), &header, sizeof header);
}

uint64_t RawFileWriter::string(std::string_view text) {
    if (each_string_once_) {
        if (auto it = string_ids_.find(text); it != string_ids_.end()) return it->second;
        string_ids_.emplace(std::string(text), next_string_);
    }
    raw::RawString s{};
    s.id = next_string_++;
    s.length = static_cast<uint32_t>(text.size());
    record(RecordKind::String, pid_, s, text);
    return s.id;
}

void RawFileWriter::process_info(std::string_view argv, std::string_view exe, std::string_view host) {
    raw::RawProcessInfo p{};
    p.command_line_string = string(argv);
    p.executable_string = string(exe);
    p.hostname_string = string(host);
    p.pid = pid_;
    record(RecordKind::ProcessInfo, pid_, p);
}

void RawFileWriter::thread(uint32_t tid, std::string_view name, uint64_t first_seen_host_ns) {
    raw::RawThreadInfo t{};
    t.name_string = string(name);
    t.first_seen_host_ns = first_seen_host_ns;
    record(RecordKind::ThreadInfo, tid, t);
}

void RawFileWriter::device(int32_t ordinal, std::string_view name, bool simulated) {
    raw::RawDeviceInfo d{};
    d.name_string = string(name);
    d.memory_bytes = 80ull << 30;
    d.ordinal = ordinal;
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sm_count = 132;
    d.clock_khz = 1'980'000;
    d.fp32_lanes_per_sm = 128;
    d.simulated = simulated ? 1 : 0;
    record(RecordKind::DeviceInfo, pid_, d);
}

void RawFileWriter::alloc(uint32_t tid, uint64_t ts, uint64_t address, uint64_t bytes, raw::MemoryKind kind,
                          uint64_t stack_id) {
    raw::RawAlloc a{};
    a.host_ns = ts;
    a.address = address;
    a.bytes = bytes;
    a.stack_id = stack_id;
    a.memory_kind = kind;
    a.api = raw::ApiPath::Runtime;
    record(RecordKind::Alloc, tid, a);
}

void RawFileWriter::free(uint32_t tid, uint64_t ts, uint64_t address, raw::MemoryKind kind) {
    raw::RawFree f{};
    f.host_ns = ts;
    f.address = address;
    f.memory_kind = kind;
    f.api = raw::ApiPath::Runtime;
    record(RecordKind::Free, tid, f);
}

uint64_t RawFileWriter::launch(uint32_t tid, uint64_t ts, std::string_view name, const std::vector<Candidate>& candidates,
                               uint32_t grid_x, uint32_t block_x, uint64_t stream) {
    raw::RawLaunch l{};
    l.host_ns = ts;
    l.sequence = next_sequence_++;
    l.name_string = string(name);
    l.stream = stream;
    l.grid[0] = grid_x;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = block_x;
    l.block[1] = l.block[2] = 1;
    l.candidate_count = static_cast<uint16_t>(candidates.size());
    l.api = raw::ApiPath::Runtime;
    if (capturing_) {
        l.captured = 1;
        l.stream = capture_stream_;
    }
    std::string tail(candidates.size() * sizeof(raw::RawPointerCandidate), '\0');
    for (size_t i = 0; i < candidates.size(); ++i) {
        raw::RawPointerCandidate c{};
        c.value = candidates[i].value;
        c.param_index = candidates[i].param_index;
        c.param_offset = candidates[i].param_offset;
        c.read_only = candidates[i].read_only ? 1 : 0;
        std::memcpy(tail.data() + i * sizeof c, &c, sizeof c);
    }
    record(RecordKind::Launch, tid, l, tail);
    return l.sequence;
}

namespace {
raw::RawDeviceActivity activity(uint64_t correlation, uint64_t start, uint64_t end) {
    raw::RawDeviceActivity d{};
    d.start_host_ns = start;
    d.end_host_ns = end;
    d.correlation_id = correlation;
    d.stream_id = 7;
    return d;
}
}  // namespace

void RawFileWriter::device_kernel(uint64_t sequence, uint64_t start, uint64_t end, std::string_view name) {
    raw::RawDeviceActivity d = activity(next_correlation_++, start, end);
    d.name_string = string(name);
    record(RecordKind::DeviceKernel, 0, d);
    raw::RawCorrelation c{};
    c.correlation_id = d.correlation_id;
    c.sequence = sequence;
    record(RecordKind::Correlation, 0, c);
}

void RawFileWriter::device_kernel_of_thread(uint32_t tid, uint64_t correlation, uint64_t start, uint64_t end,
                                            std::string_view name) {
    raw::RawDeviceActivity d = activity(correlation, start, end);
    d.name_string = string(name);
    record(RecordKind::DeviceKernel, 0, d);
    raw::RawCorrelation c{};
    c.correlation_id = correlation;
    c.sequence = raw::kThreadCorrelationTag | tid;
    record(RecordKind::Correlation, 0, c);
}

uint64_t RawFileWriter::copy(uint32_t tid, uint64_t ts, raw::CopyKind kind, uint64_t dst, uint64_t src, uint64_t bytes) {
    raw::RawCopy c{};
    c.host_ns = ts;
    c.sequence = next_sequence_++;
    c.dst = dst;
    c.src = src;
    c.bytes = bytes;
    c.copy_kind = kind;
    c.api = raw::ApiPath::Runtime;
    record(RecordKind::Copy, tid, c);
    return c.sequence;
}

void RawFileWriter::device_copy(uint64_t sequence, uint64_t start, uint64_t end, raw::CopyKind kind, uint64_t bytes) {
    raw::RawDeviceActivity d = activity(next_correlation_++, start, end);
    d.bytes = bytes;
    d.copy_kind = static_cast<uint8_t>(kind);
    record(RecordKind::DeviceCopy, 0, d);
    raw::RawCorrelation c{};
    c.correlation_id = d.correlation_id;
    c.sequence = sequence;
    record(RecordKind::Correlation, 0, c);
}

uint64_t RawFileWriter::set(uint32_t tid, uint64_t ts, uint64_t dst, uint64_t bytes, uint32_t value) {
    raw::RawSet s{};
    s.host_ns = ts;
    s.sequence = next_sequence_++;
    s.dst = dst;
    s.bytes = bytes;
    s.value = value;
    s.api = raw::ApiPath::Runtime;
    if (capturing_) {
        s.captured = 1;
        s.stream = capture_stream_;
    }
    record(RecordKind::Set, tid, s);
    return s.sequence;
}

void RawFileWriter::device_set(uint64_t sequence, uint64_t start, uint64_t end, uint64_t bytes) {
    raw::RawDeviceActivity d = activity(next_correlation_++, start, end);
    d.bytes = bytes;
    record(RecordKind::DeviceSet, 0, d);
    raw::RawCorrelation c{};
    c.correlation_id = d.correlation_id;
    c.sequence = sequence;
    record(RecordKind::Correlation, 0, c);
}

void RawFileWriter::stack(uint64_t id, const std::vector<uint64_t>& ips) {
    raw::RawStack s{};
    s.id = id;
    s.depth = static_cast<uint32_t>(ips.size());
    record(RecordKind::Stack, pid_, s,
           std::string_view(reinterpret_cast<const char*>(ips.data()), ips.size() * sizeof(uint64_t)));
}

void RawFileWriter::frame(uint64_t ip, std::string_view symbol, std::string_view module) {
    raw::RawFrame f{};
    f.ip = ip;
    f.symbol_string = string(symbol);
    f.module_string = string(module);
    f.offset = ip & 0xfff;
    record(RecordKind::Frame, pid_, f);
}

void RawFileWriter::process_end(raw::EndReason reason) {
    raw::RawProcessEnd end{};
    end.reason = reason;
    record(RecordKind::ProcessEnd, pid_, end);
}

void RawFileWriter::correlate_last_with_thread_too(uint32_t tid) {
    constexpr size_t size = (sizeof(raw::RawCorrelation) + 7) / 8 * 8;
    if (bytes_.size() < size) throw std::logic_error("no correlation to repeat");
    raw::RawCorrelation last;
    std::memcpy(&last, bytes_.data() + bytes_.size() - size, sizeof last);
    if (last.header.kind != RecordKind::Correlation || last.header.size != size)
        throw std::logic_error("the last record is no correlation");
    raw::RawCorrelation c{};
    c.correlation_id = last.correlation_id;
    c.sequence = raw::kThreadCorrelationTag | tid;
    record(RecordKind::Correlation, 0, c);
}

void RawFileWriter::lose_last_correlation() {
    constexpr size_t size = (sizeof(raw::RawCorrelation) + 7) / 8 * 8;
    if (bytes_.size() < size) throw std::logic_error("no record to lose");
    raw::RawRecordHeader h;
    std::memcpy(&h, bytes_.data() + bytes_.size() - size, sizeof h);
    if (h.kind != RecordKind::Correlation || h.size != size)
        throw std::logic_error("the last record is no correlation");
    bytes_.resize(bytes_.size() - size);
}

void RawFileWriter::dropped(uint64_t count, raw::DropCause cause) {
    raw::RawDropped d{};
    d.count = count;
    d.cause = cause;
    record(RecordKind::Dropped, pid_, d);
}

void RawFileWriter::clock_source(raw::ClockSource source) {
    raw::RawClockSource c{};
    c.source = source;
    record(RecordKind::ClockSource, pid_, c);
}

std::string RawFileWriter::save(const std::string& dir) const {
    const std::string path = dir + "/raw-" + std::to_string(pid_) + ".tbdraw";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
    return path;
}

uint64_t RawFileWriter::graph_capture(uint32_t tid, uint64_t ts, raw::CapturePhase phase, uint64_t stream,
                                      uint64_t graph) {
    raw::RawGraphCapture c{};
    c.host_ns = ts;
    c.sequence = next_sequence_++;
    c.stream = stream;
    c.graph = graph;
    c.phase = phase;
    record(RecordKind::GraphCapture, tid, c);
    capturing_ = phase == raw::CapturePhase::Begin;
    capture_stream_ = stream;
    return c.sequence;
}

void RawFileWriter::graph_instantiate(uint32_t tid, uint64_t ts, uint64_t graph, uint64_t exec) {
    raw::RawGraphInstantiate i{};
    i.host_ns = ts;
    i.graph = graph;
    i.graph_exec = exec;
    record(RecordKind::GraphInstantiate, tid, i);
}

uint64_t RawFileWriter::graph_launch(uint32_t tid, uint64_t ts, uint64_t exec, uint64_t stream) {
    raw::RawGraphLaunch g{};
    g.host_ns = ts;
    g.sequence = next_sequence_++;
    g.stream = stream;
    g.graph_exec = exec;
    g.api = raw::ApiPath::Runtime;
    record(RecordKind::GraphLaunch, tid, g);
    return g.sequence;
}

void RawFileWriter::device_kernel_of_graph(uint64_t graph_launch_sequence, uint64_t correlation, uint64_t start,
                                           uint64_t end, std::string_view name) {
    raw::RawDeviceActivity d = activity(correlation, start, end);
    d.name_string = string(name);
    record(RecordKind::DeviceKernel, 0, d);
    raw::RawCorrelation c{};
    c.correlation_id = correlation;
    c.sequence = graph_launch_sequence;
    record(RecordKind::Correlation, 0, c);
}

void RawFileWriter::device_set_of_graph(uint64_t graph_launch_sequence, uint64_t correlation, uint64_t start,
                                        uint64_t end, uint64_t bytes) {
    raw::RawDeviceActivity d = activity(correlation, start, end);
    d.bytes = bytes;
    record(RecordKind::DeviceSet, 0, d);
    raw::RawCorrelation c{};
    c.correlation_id = correlation;
    c.sequence = graph_launch_sequence;
    record(RecordKind::Correlation, 0, c);
}

}  // namespace tbdprof::test
