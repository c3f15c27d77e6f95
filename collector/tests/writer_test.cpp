// The writer end to end: several threads emit records, the writer drains them into a file, the
// product's raw reader (tbdprof/trace/raw_reader.h) reads them back whole and in per-thread order;
// stacks get symbolized frames; a file cut by a crash reads up to its last whole record.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <tbdprof/trace/raw_reader.h>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/raw_writer.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/stack_capture.h"

using namespace tbdprof::collector;
using namespace tbdprof::raw;
using tbdprof::trace::RawFile;
using tbdprof::trace::RawFileEnd;
using tbdprof::trace::RawRecordView;

namespace {

std::string temp_path(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/tbdprof-writer-test-" + std::to_string(getpid()) + "-" + name;
}

std::unique_ptr<RawWriter> open_writer(const std::string& path) {
    auto writer = std::make_unique<RawWriter>();
    REQUIRE(writer->open(path.c_str(), {static_cast<uint32_t>(getpid()), 1, host_monotonic_ns(), unix_time_ns()}));
    return writer;
}

// What the product's reader reads from `path`: every record (views into `file`) in file order, and
// how and where reading stopped.
struct ReadBack {
    std::vector<RawRecordView> records;
    RawFileEnd end = RawFileEnd::Clean;
    size_t end_offset = 0;
};

ReadBack read_back(RawFile& file, const std::string& path) {
    std::string error;
    REQUIRE_MESSAGE(file.open(path, error), error);
    ReadBack back;
    auto cursor = file.records();
    for (RawRecordView r{}; cursor.next(r);) back.records.push_back(r);
    back.end = cursor.end();
    back.end_offset = cursor.end_offset();
    return back;
}

std::vector<std::string> bytes_of(const ReadBack& back) {
    std::vector<std::string> bytes;
    for (const auto& r : back.records) bytes.emplace_back(reinterpret_cast<const char*>(r.data), r.size);
    return bytes;
}

}  // namespace

TEST_CASE("writer: records of 8 threads reach the file whole, in order per thread, none lost") {
    const std::string path = temp_path("threads.tbdraw");
    auto writer = open_writer(path);
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
                record.begin_host_ns = i;
                record.end_host_ns = static_cast<uint64_t>(t);
                while (!emit_record(ts, RecordKind::Sync, record)) std::this_thread::yield();  // never, at this rate
            }
            tids[t] = ts.tid;
        });
    }
    for (auto& th : threads) th.join();
    writer->stop_thread();
    REQUIRE(writer->drain(true, 1000));
    writer->close();

    RawFile file;
    const ReadBack back = read_back(file, path);
    CHECK(file.header().pid == static_cast<uint32_t>(getpid()));
    std::map<uint32_t, uint64_t> last_by_tid;
    uint64_t syncs = 0, dropped = 0, thread_infos = 0;
    bool ordered = true;
    for (const auto& r : back.records) {
        if (r.kind == RecordKind::Dropped) dropped += r.as<RawDropped>().count;
        if (r.kind == RecordKind::ThreadInfo) ++thread_infos;
        if (r.kind != RecordKind::Sync) continue;
        ++syncs;
        uint64_t& last = last_by_tid[r.tid];
        if (r.as<RawSync>().begin_host_ns != last + 1) ordered = false;
        last = r.as<RawSync>().begin_host_ns;
    }
    CHECK(back.end == RawFileEnd::Clean);
    CHECK(ordered);
    CHECK(syncs == kThreads * kPerThread);
    CHECK(dropped == 0);
    CHECK(thread_infos >= kThreads);
    for (uint32_t tid : tids) CHECK(last_by_tid[tid] == kPerThread);
    unlink(path.c_str());
}

TEST_CASE("writer: stacks get one frame per instruction pointer, with the module") {
    const std::string path = temp_path("frames.tbdraw");
    auto writer = open_writer(path);
    ThreadState& ts = thread_state();
    globals().stack_depth = 24;
    const uint64_t id = capture_stack(ts);
    REQUIRE(id != 0);
    REQUIRE(writer->drain(true, 1000));
    writer->close();
    RawFile file;
    const ReadBack back = read_back(file, path);
    std::map<uint64_t, std::string> strings;
    std::vector<uint64_t> ips;
    std::map<uint64_t, RawFrame> frames;
    for (const auto& r : back.records) {
        if (r.kind == RecordKind::String) strings[r.as<RawString>().id] = std::string(r.string_text());
        if (r.kind == RecordKind::Stack && r.as<RawStack>().id == id)
            r.append_items<RawStack>(r.as<RawStack>().depth, ips);
        if (r.kind == RecordKind::Frame) frames[r.as<RawFrame>().ip] = r.as<RawFrame>();
    }
    CHECK(back.end == RawFileEnd::Clean);
    REQUIRE(!ips.empty());
    for (uint64_t ip : ips) {
        REQUIRE(frames.count(ip) == 1);
        CHECK(!strings[frames[ip].module_string].empty());
    }
    // The innermost frame is in this test program (the collector is linked into it here), whatever
    // the program's file is called.
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    const std::filesystem::path innermost = strings[frames[ips[0]].module_string];
    CHECK(innermost.filename() == self.filename());
    unlink(path.c_str());
}

TEST_CASE("writer + reader: a file the writer wrote, cut by a crash, reads up to its last whole record") {
    const std::string path = temp_path("cut.tbdraw");
    auto writer = open_writer(path);
    ThreadState& ts = thread_state();
    constexpr uint64_t kSyncs = 100;
    for (uint64_t i = 1; i <= kSyncs; ++i) {
        RawSync record{};
        record.begin_host_ns = i;
        REQUIRE(emit_record(ts, RecordKind::Sync, record));
    }
    REQUIRE(writer->drain(true, 1000));
    writer->close();
    // The whole file, then the same file as a crash inside its last record leaves it.
    std::vector<std::string> whole;
    {
        RawFile file;  // unmapped before the file shrinks
        const ReadBack back = read_back(file, path);
        REQUIRE(back.end == RawFileEnd::Clean);
        whole = bytes_of(back);
    }
    REQUIRE(whole.size() >= kSyncs);
    const auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, size - 5);

    RawFile file;
    const ReadBack cut = read_back(file, path);
    CHECK(cut.end == RawFileEnd::Truncated);
    CHECK(cut.end_offset == size - whole.back().size());
    const std::vector<std::string> kept = bytes_of(cut);
    REQUIRE(kept.size() == whole.size() - 1);
    for (size_t i = 0; i < kept.size(); ++i) CHECK(kept[i] == whole[i]);
    unlink(path.c_str());
}
