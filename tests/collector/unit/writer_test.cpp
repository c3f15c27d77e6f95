// The writer end to end: several threads emit records, the writer drains them into a file, the raw
// reader reads them back whole and in per-thread order; stacks get symbolized frames.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/raw_writer.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/stack_capture.h"
#include "tbdprof/raw_reader.h"

using namespace tbdprof::collector;
using namespace tbdprof::raw;

namespace {

std::string temp_path(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/tbdprof-writer-test-" + std::to_string(getpid()) + "-" + name;
}

}  // namespace

TEST_CASE("writer: records of 8 threads reach the file whole, in order per thread, none lost") {
    const std::string path = temp_path("threads.tbdraw");
    auto writer = std::make_unique<RawWriter>();
    REQUIRE(writer->open(path.c_str(), {static_cast<uint32_t>(getpid()), 1, monotonic_ns(), realtime_ns()}));
    writer->start_thread();
    constexpr int kThreads = 8;
    constexpr uint64_t kPerThread = 50000;
    std::vector<std::thread> threads;
    std::vector<uint32_t> tids(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            ThreadState& ts = thread_state();
            for (uint64_t i = 1; i <= kPerThread; ++i) {
                RawSync record{};
                record.begin_ns = i;
                record.end_ns = static_cast<uint64_t>(t);
                while (!emit_record(ts, RecordKind::Sync, record)) std::this_thread::yield();  // never, at this rate
            }
            tids[t] = ts.tid;
        });
    }
    for (auto& th : threads) th.join();
    writer->stop_thread();
    REQUIRE(writer->drain(true, 1000));
    writer->close();

    std::string error;
    auto reader = RawFileReader::open(path, &error);
    REQUIRE_MESSAGE(reader.has_value(), error);
    CHECK_FALSE(reader->truncated());
    CHECK(reader->header().pid == static_cast<uint32_t>(getpid()));
    std::map<uint32_t, uint64_t> last_by_tid;
    uint64_t syncs = 0, dropped = 0, thread_infos = 0;
    bool ordered = true;
    for (const auto& r : reader->records()) {
        if (r.kind() == RecordKind::Dropped) dropped += r.value<RawDropped>().count;
        if (r.kind() == RecordKind::ThreadInfo) ++thread_infos;
        if (r.kind() != RecordKind::Sync) continue;
        ++syncs;
        uint64_t& last = last_by_tid[r.tid()];
        if (r.value<RawSync>().begin_ns != last + 1) ordered = false;
        last = r.value<RawSync>().begin_ns;
    }
    CHECK(ordered);
    CHECK(syncs == kThreads * kPerThread);
    CHECK(dropped == 0);
    CHECK(thread_infos >= kThreads);
    for (uint32_t tid : tids) CHECK(last_by_tid[tid] == kPerThread);
    unlink(path.c_str());
}

TEST_CASE("writer: stacks get one frame per instruction pointer, with the module") {
    const std::string path = temp_path("frames.tbdraw");
    auto writer = std::make_unique<RawWriter>();
    REQUIRE(writer->open(path.c_str(), {static_cast<uint32_t>(getpid()), 1, monotonic_ns(), realtime_ns()}));
    ThreadState& ts = thread_state();
    globals().stack_depth = 24;
    const uint64_t id = capture_stack(ts);
    REQUIRE(id != 0);
    REQUIRE(writer->drain(true, 1000));
    writer->close();
    auto reader = RawFileReader::open(path);
    REQUIRE(reader.has_value());
    std::map<uint64_t, std::string> strings;
    std::vector<uint64_t> ips;
    std::map<uint64_t, const RawFrame*> frames;
    for (const auto& r : reader->records()) {
        if (r.kind() == RecordKind::String) strings[r.value<RawString>().id] = std::string(r.string_text());
        if (r.kind() == RecordKind::Stack && r.value<RawStack>().id == id) {
            auto span = r.stack_ips();
            ips.assign(span.begin(), span.end());
        }
        if (r.kind() == RecordKind::Frame) frames[r.value<RawFrame>().ip] = r.as<RawFrame>();
    }
    REQUIRE(!ips.empty());
    for (uint64_t ip : ips) {
        REQUIRE(frames.count(ip) == 1);
        CHECK(!strings[frames[ip]->module_string].empty());
    }
    // The innermost frame is in this test program (the collector is linked into it here), whatever
    // the program's file is called.
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    const std::filesystem::path innermost = strings[frames[ips[0]]->module_string];
    CHECK(innermost.filename() == self.filename());
    unlink(path.c_str());
}

TEST_CASE("reader: a file cut inside a record is read up to the last whole record") {
    std::vector<uint8_t> bytes(sizeof(RawFileHeader));
    RawFileHeader header{};
    std::memcpy(header.magic, kMagic, sizeof kMagic);
    header.version = kVersion;
    std::memcpy(bytes.data(), &header, sizeof header);
    RawCpuSample sample{};
    sample.header = {RecordKind::CpuSample, sizeof sample, 7};
    for (int i = 0; i < 3; ++i) {
        const auto* p = reinterpret_cast<const uint8_t*>(&sample);
        bytes.insert(bytes.end(), p, p + sizeof sample);
    }
    bytes.resize(bytes.size() - 5);
    auto reader = RawFileReader::from_bytes(bytes);
    REQUIRE(reader.has_value());
    CHECK(reader->truncated());
    CHECK(reader->records().size() == 2);
    CHECK(reader->records()[1].tid() == 7);

    std::vector<uint8_t> bad(bytes.begin(), bytes.begin() + sizeof header);
    bad[0] = 'X';
    std::string error;
    CHECK_FALSE(RawFileReader::from_bytes(bad, &error).has_value());
    CHECK(error.find("magic") != std::string::npos);
}
