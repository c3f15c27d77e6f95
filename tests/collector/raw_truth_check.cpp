// Compares what the collector wrote (raw files in a run directory) with the simulated GPU's ground
// truth: every allocation, free, kernel, copy and set exactly once; device timestamps equal to the
// truth (up to one constant clock offset, see docs/collector.md); launch geometry and names; cuBLAS
// calls and their FLOPs; stacks and frames; no drops. Optional: expected pointer arguments.
//
// usage: raw_truth_check --truth FILE --run-dir DIR [--processes N] [--pointers FILE] [--crashed]
//                        [--library-calls] [--no-stacks (expect none)] [--require-paths 2,3] [--host-only]
//                        [--expect-cupti-holds] [--expect-ring-holds]
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <tbdprof/trace/raw_reader.h>

#include "truth_file.h"

using namespace tbdprof::raw;
using tbdprof::trace::RawFile;
using tbdprof::trace::RawFileEnd;
using RecordView = tbdprof::trace::RawRecordView;
using tbdprof::test::TruthEvent;

namespace {

struct Options {
    std::string truth, run_dir, pointers;
    int processes = -1;
    bool crashed = false;
    bool library_calls = false;
    bool stacks = true;
    bool expect_cupti_holds = false;  // the run must have held threads for CUPTI buffers (back-pressure)
    bool expect_ring_holds = false;   // ... for room in their rings
    bool host_only = false;  // CUPTI off: no device records; match kernels by name and geometry
    std::vector<int> required_paths;  // ApiPath values at least one launch must have come through
};

int g_failures = 0;

void fail(const char* format, ...) __attribute__((format(printf, 1, 2)));
void fail(const char* format, ...) {
    if (++g_failures <= 20) {
        va_list args;
        va_start(args, format);
        std::fputs("FAIL: ", stdout);
        std::vprintf(format, args);
        std::fputs("\n", stdout);
        va_end(args);
    }
}

MemoryKind memory_kind_of(const std::string& kind) {
    if (kind == "device_async") return MemoryKind::DeviceAsync;
    if (kind == "pinned_host") return MemoryKind::PinnedHost;
    if (kind == "managed") return MemoryKind::Managed;
    if (kind == "device_mapped") return MemoryKind::DeviceMapped;
    return MemoryKind::Device;
}

CopyKind copy_kind_of(const std::string& kind) {
    if (kind == "HtoD") return CopyKind::HostToDevice;
    if (kind == "DtoH") return CopyKind::DeviceToHost;
    if (kind == "DtoD") return CopyKind::DeviceToDevice;
    return CopyKind::HostToHost;
}

struct ProcessRecords {
    std::unordered_map<uint64_t, std::string> strings;
    std::vector<RecordView> allocs, frees, launches, copies, sets, library_calls, stacks;
    std::unordered_map<uint64_t, RawDeviceActivity> device_by_correlation;
    std::set<uint64_t> kernel_correlations;
    std::unordered_map<uint64_t, uint64_t> sequence_by_correlation;
    std::unordered_map<uint64_t, RecordView> launch_by_sequence, copy_by_sequence, set_by_sequence;
    std::set<uint64_t> framed_ips, stack_ids;
    uint64_t dropped = 0;
    RawProcessEnd process_end{};  // back-pressure totals
    RawFileEnd end = RawFileEnd::Clean;
    int cupti_clock = 0, host_clock = 0, device_infos = 0, process_infos = 0;
};

// Kernels CUPTI tied to a launching thread (kThreadCorrelationTag) rather than to a sequence number:
// the k-th such kernel of a thread, in CUPTI's (call) order, is the thread's k-th recorded launch.
// Every launch must have its kernel here (nothing is dropped in these tests), so the counts must
// agree; the name and geometry checks against the truth then verify the pairing.
void resolve_thread_tags(ProcessRecords& p) {
    std::map<uint32_t, std::vector<uint64_t>> kernels_of_thread;  // correlation ids, ascending
    for (uint64_t correlation : p.kernel_correlations) {
        auto tag = p.sequence_by_correlation.find(correlation);
        if (tag != p.sequence_by_correlation.end() && (tag->second & kThreadCorrelationTag) != 0)
            kernels_of_thread[static_cast<uint32_t>(tag->second)].push_back(correlation);
    }
    std::map<uint32_t, std::vector<uint64_t>> launches_of_thread;  // sequences, in file order
    for (const auto& r : p.launches) launches_of_thread[r.tid].push_back(r.as<RawLaunch>().sequence);
    for (const auto& [tid, correlations] : kernels_of_thread) {
        const auto& sequences = launches_of_thread[tid];
        if (sequences.size() != correlations.size()) {
            fail("thread %u: %zu kernels tied to it by CUPTI, %zu launches recorded", tid, correlations.size(),
                 sequences.size());
            continue;
        }
        for (size_t i = 0; i < correlations.size(); ++i) p.sequence_by_correlation[correlations[i]] = sequences[i];
    }
}

// The records of `file`, read by the product's reader: what the builder sees.
ProcessRecords index_records(const RawFile& file) {
    ProcessRecords p;
    auto cursor = file.records();
    for (RecordView r{}; cursor.next(r);) {
        switch (r.kind) {
        case RecordKind::String: p.strings[r.as<RawString>().id] = std::string(r.string_text()); break;
        case RecordKind::Alloc: p.allocs.push_back(r); break;
        case RecordKind::Free: p.frees.push_back(r); break;
        case RecordKind::Launch:
            p.launches.push_back(r);
            if (!p.launch_by_sequence.emplace(r.as<RawLaunch>().sequence, r).second)
                fail("sequence %" PRIu64 " used twice", r.as<RawLaunch>().sequence);
            break;
        case RecordKind::Copy:
            p.copies.push_back(r);
            p.copy_by_sequence.emplace(r.as<RawCopy>().sequence, r);
            break;
        case RecordKind::Set:
            p.sets.push_back(r);
            p.set_by_sequence.emplace(r.as<RawSet>().sequence, r);
            break;
        case RecordKind::LibraryCall: p.library_calls.push_back(r); break;
        case RecordKind::Stack:
            p.stacks.push_back(r);
            p.stack_ids.insert(r.as<RawStack>().id);
            break;
        case RecordKind::Frame: p.framed_ips.insert(r.as<RawFrame>().ip); break;
        case RecordKind::DeviceKernel:
        case RecordKind::DeviceCopy:
        case RecordKind::DeviceSet: {
            const auto d = r.as<RawDeviceActivity>();
            if (!p.device_by_correlation.emplace(d.correlation_id, d).second)
                fail("CUPTI correlation %" PRIu64 " reported twice", d.correlation_id);
            if (r.kind == RecordKind::DeviceKernel) p.kernel_correlations.insert(d.correlation_id);
            break;
        }
        case RecordKind::Correlation: {
            // Work launched through the runtime brings two external ids for one CUPTI id, the runtime
            // call's (the thread's tag) and the driver call's (the sequence the hook pushed): the
            // sequence names the call, so a tag never replaces it.
            const auto c = r.as<RawCorrelation>();
            auto [it, added] = p.sequence_by_correlation.emplace(c.correlation_id, c.sequence);
            if (!added && (c.sequence & kThreadCorrelationTag) == 0) it->second = c.sequence;
            break;
        }
        case RecordKind::Dropped: p.dropped += r.as<RawDropped>().count; break;
        case RecordKind::ClockSource:
            if (r.as<RawClockSource>().source == ClockSource::Cupti) ++p.cupti_clock;
            else ++p.host_clock;
            break;
        case RecordKind::DeviceInfo: ++p.device_infos; break;
        case RecordKind::ProcessInfo: ++p.process_infos; break;
        case RecordKind::ProcessEnd: p.process_end = r.as<RawProcessEnd>(); break;
        default: break;
        }
    }
    p.end = cursor.end();
    resolve_thread_tags(p);
    return p;
}

// Device times equal the truth's up to one constant offset (the simulated CUPTI measures the offset
// between our clock callback and its own, both CLOCK_MONOTONIC, by reading them one after the other).
struct OffsetCheck {
    bool have = false;
    int64_t offset = 0;
    void check(const char* what, uint64_t truth_start, uint64_t truth_end, const RawDeviceActivity& d) {
        const int64_t start_delta = static_cast<int64_t>(d.start_host_ns - truth_start);
        const int64_t end_delta = static_cast<int64_t>(d.end_host_ns - truth_end);
        if (!have) {
            have = true;
            offset = start_delta;
        }
        if (std::llabs(start_delta - offset) > 2 || std::llabs(end_delta - offset) > 2)
            fail("%s device time %" PRIu64 "-%" PRIu64 " vs truth %" PRIu64 "-%" PRIu64 " (offset %" PRId64 ")", what,
                 d.start_host_ns, d.end_host_ns, truth_start, truth_end, offset);
    }
};

// Looks up our host record for a truth event through CUPTI's correlation id.
template <typename Map>
const RecordView* host_record(const ProcessRecords& p, const TruthEvent& e, const Map& by_sequence,
                              OffsetCheck& offsets, bool device_required) {
    auto device = p.device_by_correlation.find(e.correlation);
    if (device == p.device_by_correlation.end()) {
        if (device_required) fail("%s corr %" PRIu64 ": no device record", e.type.c_str(), e.correlation);
        return nullptr;
    }
    offsets.check(e.type.c_str(), e.start, e.end, device->second);
    auto sequence = p.sequence_by_correlation.find(e.correlation);
    if (sequence == p.sequence_by_correlation.end()) {
        fail("%s corr %" PRIu64 ": no correlation record", e.type.c_str(), e.correlation);
        return nullptr;
    }
    auto host = by_sequence.find(sequence->second);
    if (host == by_sequence.end()) {
        fail("%s corr %" PRIu64 ": no host record for sequence %" PRIu64, e.type.c_str(), e.correlation,
             sequence->second);
        return nullptr;
    }
    return &host->second;
}

void check_memory(const ProcessRecords& p, const std::vector<TruthEvent>& truth) {
    std::multiset<std::tuple<uint64_t, uint64_t, int>> expected_allocs, got_allocs;
    std::multiset<uint64_t> expected_frees, got_frees;
    for (const auto& e : truth) {
        if (e.type == "alloc") expected_allocs.insert({e.address, e.bytes, static_cast<int>(memory_kind_of(e.kind))});
        if (e.type == "free") expected_frees.insert(e.address);
    }
    for (const auto& r : p.allocs) {
        const auto a = r.as<RawAlloc>();
        got_allocs.insert({a.address, a.bytes, static_cast<int>(a.memory_kind)});
    }
    for (const auto& r : p.frees) got_frees.insert(r.as<RawFree>().address);
    if (expected_allocs != got_allocs)
        fail("allocations differ: truth %zu, recorded %zu", expected_allocs.size(), got_allocs.size());
    if (expected_frees != got_frees) fail("frees differ: truth %zu, recorded %zu", expected_frees.size(), got_frees.size());
}

void check_work(const ProcessRecords& p, const std::vector<TruthEvent>& truth, OffsetCheck& offsets,
                std::map<uint64_t, double>& flops_by_sequence) {
    size_t kernels = 0, copies = 0, sets = 0;
    for (const auto& e : truth) {
        if (e.type == "kernel") {
            ++kernels;
            const RecordView* r = host_record(p, e, p.launch_by_sequence, offsets, true);
            if (r == nullptr) continue;
            const auto l = r->as<RawLaunch>();
            flops_by_sequence[l.sequence] = e.flops;
            if (std::memcmp(l.grid, e.grid, sizeof e.grid) != 0 || std::memcmp(l.block, e.block, sizeof e.block) != 0 ||
                l.shared_mem_bytes != e.shared_mem)
                fail("kernel corr %" PRIu64 ": geometry differs", e.correlation);
            auto name = p.strings.find(l.name_string);
            if (name == p.strings.end() || name->second != e.name)
                fail("kernel corr %" PRIu64 ": name '%s' vs truth '%s'", e.correlation,
                     name == p.strings.end() ? "?" : name->second.c_str(), e.name.c_str());
        } else if (e.type == "memcpy") {
            ++copies;
            const RecordView* r = host_record(p, e, p.copy_by_sequence, offsets, true);
            if (r == nullptr) continue;
            const auto c = r->as<RawCopy>();
            if (c.bytes != e.bytes) fail("copy corr %" PRIu64 ": bytes differ", e.correlation);
            if (c.copy_kind != CopyKind::Default && c.copy_kind != copy_kind_of(e.kind))
                fail("copy corr %" PRIu64 ": kind differs", e.correlation);
        } else if (e.type == "memset") {
            ++sets;
            const RecordView* r = host_record(p, e, p.set_by_sequence, offsets, true);
            if (r == nullptr) continue;
            const auto s = r->as<RawSet>();
            if (s.bytes != e.bytes || s.value != e.value) fail("set corr %" PRIu64 ": bytes or value differ", e.correlation);
        }
    }
    if (p.launches.size() != kernels) fail("launches: truth %zu, recorded %zu", kernels, p.launches.size());
    if (p.copies.size() != copies) fail("copies: truth %zu, recorded %zu", copies, p.copies.size());
    if (p.sets.size() != sets) fail("sets: truth %zu, recorded %zu", sets, p.sets.size());
}

// Without CUPTI there is no correlation: the same kernels (name, geometry), copies and sets by count.
void check_work_host_only(const ProcessRecords& p, const std::vector<TruthEvent>& truth) {
    std::multiset<std::string> expected, got;
    size_t copies = 0, sets = 0;
    for (const auto& e : truth) {
        if (e.type == "kernel")
            expected.insert(e.name + " " + std::to_string(e.grid[0]) + "," + std::to_string(e.block[0]));
        copies += e.type == "memcpy";
        sets += e.type == "memset";
    }
    for (const auto& r : p.launches) {
        const auto l = r.as<RawLaunch>();
        auto name = p.strings.find(l.name_string);
        got.insert((name == p.strings.end() ? "?" : name->second) + " " + std::to_string(l.grid[0]) + "," +
                   std::to_string(l.block[0]));
    }
    if (expected != got) fail("launches differ from the truth's kernels (%zu vs %zu)", got.size(), expected.size());
    if (p.copies.size() != copies) fail("copies: truth %zu, recorded %zu", copies, p.copies.size());
    if (p.sets.size() != sets) fail("sets: truth %zu, recorded %zu", sets, p.sets.size());
    if (!p.device_by_correlation.empty() || !p.sequence_by_correlation.empty()) fail("device records without CUPTI");
}

void check_library_calls(const ProcessRecords& p, const std::vector<TruthEvent>& truth,
                         const std::map<uint64_t, double>& flops_by_sequence) {
    size_t annotated = 0;
    for (const auto& e : truth)
        if (e.type == "kernel" && e.precision != 0) ++annotated;
    if (p.library_calls.empty()) fail("no cuBLAS calls recorded (truth has %zu cuBLAS kernels)", annotated);
    size_t launches_inside = 0;
    for (const auto& r : p.library_calls) {
        const auto c = r.as<RawLibraryCall>();
        double flops = 0;
        if (c.last_sequence == 0) {
            fail("library call without launches");
            continue;
        }
        for (uint64_t s = c.first_sequence; s <= c.last_sequence; ++s) {
            auto launch = p.launch_by_sequence.find(s);
            if (launch == p.launch_by_sequence.end() || launch->second.tid != r.tid) continue;
            ++launches_inside;
            if (launch->second.as<RawLaunch>().api != ApiPath::Library) fail("launch %" PRIu64 " in a library call not marked Library", s);
            if (auto f = flops_by_sequence.find(s); f != flops_by_sequence.end()) flops += f->second;
        }
        if (std::fabs(flops - c.flops) > 1e-6 * c.flops)
            fail("library call flops %g, kernels inside %g", c.flops, flops);
        if (c.a == 0 || c.b == 0 || c.c == 0) fail("library call without operand pointers");
    }
    if (launches_inside < annotated) fail("cuBLAS kernels %zu, launches inside library calls %zu", annotated, launches_inside);
}

// Lines "GRIDX PTR[r|w] ...": the launch with that grid.x must have these candidates.
void check_pointers(const ProcessRecords& p, const std::string& path) {
    std::ifstream in(path);
    std::string line;
    size_t checked = 0;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        uint32_t grid_x = 0;
        fields >> grid_x;
        bool launched = false;
        std::vector<RawPointerCandidate> candidates;
        for (const auto& r : p.launches)
            if (r.as<RawLaunch>().grid[0] == grid_x) {
                launched = true;
                candidates.clear();
                r.append_items<RawLaunch>(r.as<RawLaunch>().candidate_count, candidates);
            }
        if (!launched) {
            fail("no launch with grid.x %u", grid_x);
            continue;
        }
        std::string token;
        while (fields >> token) {
            const bool read_only = token.back() == 'r';
            const uint64_t value = std::stoull(token.substr(0, token.size() - 1), nullptr, 0);
            bool found = false;
            for (const auto& c : candidates)
                if (c.value == value) {
                    found = true;
                    if ((c.read_only != 0) != read_only) fail("grid.x %u: pointer 0x%" PRIx64 " read_only %d", grid_x, value, c.read_only);
                }
            if (!found) fail("grid.x %u: pointer 0x%" PRIx64 " not among %zu candidates", grid_x, value, candidates.size());
        }
        ++checked;
    }
    if (checked == 0) fail("pointer file %s has no launches", path.c_str());
}

void check_stacks(const ProcessRecords& p, bool crashed) {
    for (const auto& r : p.allocs) {
        const uint64_t id = r.as<RawAlloc>().stack_id;
        if (id == 0 || p.stack_ids.count(id) == 0) fail("allocation 0x%" PRIx64 " without a stack", r.as<RawAlloc>().address);
    }
    if (crashed) return;
    std::vector<uint64_t> ips;
    for (const auto& s : p.stacks) {
        ips.clear();
        s.append_items<RawStack>(s.as<RawStack>().depth, ips);
        for (uint64_t ip : ips)
            if (p.framed_ips.count(ip) == 0) fail("ip 0x%" PRIx64 " without a frame", ip);
    }
}

int check_process(const Options& o, uint32_t pid, const std::vector<TruthEvent>& truth) {
    const std::string path = o.run_dir + "/raw-" + std::to_string(pid) + ".tbdraw";
    RawFile file;
    std::string error;
    if (!file.open(path, error)) {
        fail("%s", error.c_str());
        return 0;
    }
    ProcessRecords p = index_records(file);
    if (file.header().pid != pid) fail("%s: header pid %u", path.c_str(), file.header().pid);
    // A clean exit writes every record whole; a crash may cut the last one (read up to it).
    if (p.end == RawFileEnd::Corrupt || (!o.crashed && p.end != RawFileEnd::Clean))
        fail("%s %s", path.c_str(), tbdprof::trace::describe(p.end));
    if (p.process_infos != 1) fail("pid %u: %d process info records", pid, p.process_infos);
    if (p.cupti_clock != (o.host_only ? 0 : 1) || p.host_clock != (o.host_only ? 1 : 0))
        fail("pid %u: clock sources cupti %d host %d", pid, p.cupti_clock, p.host_clock);
    if (p.device_infos != 1) fail("pid %u: %d device info records", pid, p.device_infos);
    if (p.dropped != 0) fail("pid %u: %" PRIu64 " events dropped", pid, p.dropped);
    if (o.expect_cupti_holds && (p.process_end.cupti_holds == 0 || p.process_end.cupti_held_ns == 0))
        fail("pid %u: no back-pressure hold for CUPTI buffers recorded", pid);
    if (o.expect_ring_holds && p.process_end.ring_holds == 0)
        fail("pid %u: no back-pressure hold for a full ring recorded", pid);
    std::printf("pid %u: held %.3f s in %u ring waits, %.3f s in %u CUPTI-buffer waits\n", pid,
                static_cast<double>(p.process_end.ring_held_ns) / 1e9, p.process_end.ring_holds,
                static_cast<double>(p.process_end.cupti_held_ns) / 1e9, p.process_end.cupti_holds);
    check_memory(p, truth);
    OffsetCheck offsets;
    std::map<uint64_t, double> flops_by_sequence;
    if (o.host_only) check_work_host_only(p, truth);
    else check_work(p, truth, offsets, flops_by_sequence);
    if (std::llabs(offsets.offset) > 5000) fail("clock offset %" PRId64 " ns", offsets.offset);
    if (o.library_calls && !o.host_only) check_library_calls(p, truth, flops_by_sequence);
    if (!o.pointers.empty()) check_pointers(p, o.pointers);
    if (o.stacks) {
        check_stacks(p, o.crashed);
    } else {
        for (const auto& r : p.allocs)
            if (r.as<RawAlloc>().stack_id != 0) fail("stacks are off but an allocation has one");
        if (!p.stacks.empty()) fail("stacks are off but %zu were written", p.stacks.size());
    }
    for (int api : o.required_paths) {
        bool seen = false;
        for (const auto& r : p.launches) seen = seen || static_cast<int>(r.as<RawLaunch>().api) == api;
        for (const auto& r : p.allocs) seen = seen || static_cast<int>(r.as<RawAlloc>().api) == api;
        if (!seen) fail("pid %u: nothing recorded through API path %d", pid, api);
    }
    std::printf("pid %u: %zu allocs, %zu frees, %zu launches, %zu copies, %zu sets, %zu library calls, %zu stacks, "
                "clock offset %" PRId64 " ns, truncated %d\n",
                pid, p.allocs.size(), p.frees.size(), p.launches.size(), p.copies.size(), p.sets.size(),
                p.library_calls.size(), p.stacks.size(), offsets.offset, p.end != RawFileEnd::Clean);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--truth") o.truth = value();
        else if (a == "--run-dir") o.run_dir = value();
        else if (a == "--pointers") o.pointers = value();
        else if (a == "--processes") o.processes = std::atoi(value().c_str());
        else if (a == "--crashed") o.crashed = true;
        else if (a == "--library-calls") o.library_calls = true;
        else if (a == "--no-stacks") o.stacks = false;
        else if (a == "--host-only") o.host_only = true;
        else if (a == "--expect-cupti-holds") o.expect_cupti_holds = true;
        else if (a == "--expect-ring-holds") o.expect_ring_holds = true;
        else if (a == "--require-paths") {
            std::istringstream list(value());
            std::string item;
            while (std::getline(list, item, ',')) o.required_paths.push_back(std::atoi(item.c_str()));
        }
        else {
            std::fprintf(stderr, "raw_truth_check: unknown option %s\n", a.c_str());
            return 2;
        }
    }
    auto truth = tbdprof::test::read_truth(o.truth);
    if (truth.empty()) fail("truth file %s is empty", o.truth.c_str());
    for (const auto& [pid, events] : truth) check_process(o, pid, events);
    std::string error;
    const auto files = tbdprof::trace::list_raw_files(o.run_dir, error);
    if (!error.empty()) fail("%s", error.c_str());
    if (o.processes >= 0 && static_cast<int>(files.size()) != o.processes)
        fail("%zu raw files, expected %d", files.size(), o.processes);
    if (g_failures > 0) {
        std::printf("%d failure(s)\n", g_failures);
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
