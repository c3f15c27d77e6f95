// Writes raw event files by hand, the way the collector would, for builder tests: every record is
// laid out from the structs of raw_format.h, so a test can also cut or corrupt the bytes.
#pragma once

#include <tbdprof/raw_format.h>
#include <tbdprof/test_support/temp_dir.h>  // TempDir, for the tests that write raw files

#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::test {

struct Candidate {
    uint64_t value;
    uint16_t param_index;
    uint16_t param_offset = 0;
    bool read_only = false;
};

class RawFileWriter {
public:
    RawFileWriter(uint32_t pid, uint64_t start_ns, uint32_t parent_pid = 0);

    uint64_t string(std::string_view text);
    // From now on each distinct text is written once, as the collector does (by default every call
    // writes a string record): for runs long enough that a record per launch would be the test's cost.
    void write_each_string_once() { each_string_once_ = true; }
    void process_info(std::string_view argv_nul_joined, std::string_view exe, std::string_view host);
    void thread(uint32_t tid, std::string_view name, uint64_t first_seen_host_ns);
    void device(int32_t ordinal, std::string_view name, bool simulated);
    void alloc(uint32_t tid, uint64_t ts, uint64_t address, uint64_t bytes,
               raw::MemoryKind kind = raw::MemoryKind::Device, uint64_t stack_id = 0);
    void free(uint32_t tid, uint64_t ts, uint64_t address, raw::MemoryKind kind = raw::MemoryKind::Device);
    // Returns the launch's sequence number.
    uint64_t launch(uint32_t tid, uint64_t ts, std::string_view mangled_name, const std::vector<Candidate>& candidates = {},
                    uint32_t grid_x = 1, uint32_t block_x = 1, uint64_t stream = 0);
    // A CUPTI device record for the work with host `sequence` (+ the RawCorrelation joining them).
    void device_kernel(uint64_t sequence, uint64_t start, uint64_t end, std::string_view mangled_name);
    // A CUPTI kernel record that CUPTI tied to thread `tid` (raw::kThreadCorrelationTag), not to a
    // sequence: the builder pairs it with that thread's launches in `correlation` order.
    void device_kernel_of_thread(uint32_t tid, uint64_t correlation, uint64_t start, uint64_t end,
                                 std::string_view mangled_name);
    uint64_t copy(uint32_t tid, uint64_t ts, raw::CopyKind kind, uint64_t dst, uint64_t src, uint64_t bytes);
    void device_copy(uint64_t sequence, uint64_t start, uint64_t end, raw::CopyKind kind, uint64_t bytes);
    uint64_t set(uint32_t tid, uint64_t ts, uint64_t dst, uint64_t bytes, uint32_t value);
    void device_set(uint64_t sequence, uint64_t start, uint64_t end, uint64_t bytes);
    // CUDA graphs. Between a Begin and an End capture record, launches, copies and sets are written as
    // captured (raw::RawLaunch::captured) on the capture's stream. Each returns the record's sequence.
    uint64_t graph_capture(uint32_t tid, uint64_t ts, raw::CapturePhase phase, uint64_t stream, uint64_t graph = 0);
    void graph_instantiate(uint32_t tid, uint64_t ts, uint64_t graph, uint64_t exec);
    uint64_t graph_launch(uint32_t tid, uint64_t ts, uint64_t exec, uint64_t stream);
    // A CUPTI record of a replay: correlation `correlation` (one per replay) tied to the graph launch.
    void device_kernel_of_graph(uint64_t graph_launch_sequence, uint64_t correlation, uint64_t start, uint64_t end,
                                std::string_view mangled_name);
    void device_set_of_graph(uint64_t graph_launch_sequence, uint64_t correlation, uint64_t start, uint64_t end,
                             uint64_t bytes);
    // Takes back the RawCorrelation just written (by device_kernel*, device_copy, device_set): the
    // collector lost it (a full ring or CUPTI buffer) while the device record itself was kept.
    void lose_last_correlation();
    // Writes a second RawCorrelation for the id of the last one written, to thread `tid`'s tag: the
    // external correlation real CUPTI writes in front of the runtime API record of work launched through
    // the runtime, which shares the id of the driver API record inside it (the one our hooks named).
    void correlate_last_with_thread_too(uint32_t tid);
    void stack(uint64_t id, const std::vector<uint64_t>& ips);
    void frame(uint64_t ip, std::string_view symbol, std::string_view module);
    void dropped(uint64_t count, raw::DropCause cause);
    void clock_source(raw::ClockSource source);

    // Appends a record: `fixed` (its header is filled in here) followed by `tail`, padded to 8.
    template <class T>
    void record(raw::RecordKind kind, uint32_t tid, T fixed, std::string_view tail = {}) {
        const size_t size = (sizeof(T) + tail.size() + 7) / 8 * 8;
        fixed.header = {kind, static_cast<uint16_t>(size), tid};
        const size_t at = bytes_.size();
        bytes_.resize(at + size);
        std::memcpy(bytes_.data() + at, &fixed, sizeof(T));
        if (!tail.empty()) std::memcpy(bytes_.data() + at + sizeof(T), tail.data(), tail.size());
    }

    std::vector<std::byte>& bytes() { return bytes_; }
    uint32_t pid() const { return pid_; }
    // The collector's last flush: a file without it ended without (exit_group, SIGKILL), which the
    // builder reports.
    void process_end(raw::EndReason reason = raw::EndReason::Exit);
    // Writes raw-<pid>.tbdraw into `dir`; returns its path.
    std::string save(const std::string& dir) const;

private:
    uint32_t pid_;
    uint64_t next_string_ = 1;
    bool each_string_once_ = false;
    std::map<std::string, uint64_t, std::less<>> string_ids_;
    uint64_t next_sequence_ = 1;
    uint64_t next_correlation_ = 1000;
    bool capturing_ = false;
    uint64_t capture_stream_ = 0;
    std::vector<std::byte> bytes_;
};

}  // namespace tbdprof::test
