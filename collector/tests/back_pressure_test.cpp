// Back-pressure (back_pressure.h): a thread whose ring is full drains it itself and loses nothing;
// without anyone to drain, the record is dropped, counted, and the drop's time is reported.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include <tbdprof/trace/raw_reader.h>

#include "tbdprof/collector/back_pressure.h"
#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/raw_writer.h"
#include "tbdprof/collector/recorder.h"

using namespace tbdprof::collector;
using namespace tbdprof::raw;

namespace {

RawWriter* g_test_writer = nullptr;
back_pressure::DrainAttempt drain_test_writer() {
    return g_test_writer->drain_for_producer();
}

std::string temp_path(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/tbdprof-bp-test-" + std::to_string(getpid()) + "-" + name;
}

struct FileCounts {
    uint64_t syncs = 0, dropped = 0, first_host_ns = 0, last_host_ns = 0;
};

FileCounts count_file(const std::string& path) {
    tbdprof::trace::RawFile file;
    std::string error;
    REQUIRE_MESSAGE(file.open(path, error), error);
    FileCounts c;
    auto cursor = file.records();
    for (tbdprof::trace::RawRecordView r{}; cursor.next(r);) {
        if (r.kind == RecordKind::Sync) ++c.syncs;
        if (r.kind == RecordKind::Dropped) {
            c.dropped += r.as<RawDropped>().count;
            c.first_host_ns = r.as<RawDropped>().first_host_ns;
            c.last_host_ns = r.as<RawDropped>().last_host_ns;
        }
    }
    return c;
}

}  // namespace

TEST_CASE("back-pressure: with no writer thread, a thread fills its ring three times over and loses nothing") {
    const std::string path = temp_path("self-drain.tbdraw");
    auto writer = std::make_unique<RawWriter>();
    REQUIRE(writer->open(path.c_str(), {static_cast<uint32_t>(getpid()), 1, host_monotonic_ns(), unix_time_ns()}));
    g_test_writer = writer.get();
    back_pressure::set_drainer(drain_test_writer);  // no writer thread: only the producer drains
    const uint32_t holds_before = back_pressure::totals().ring_holds;
    const uint64_t records = 3 * ring_registry().ring_bytes() / sizeof(RawSync);
    uint64_t refused = 0;
    std::thread producer([&] {
        ThreadState& ts = thread_state();
        for (uint64_t i = 0; i < records; ++i) {
            RawSync record{};
            record.begin_host_ns = i;
            if (!emit_record(ts, RecordKind::Sync, record)) ++refused;
        }
    });
    producer.join();
    REQUIRE(writer->drain(false, 1000));
    back_pressure::set_drainer(nullptr);
    writer->close();
    const FileCounts counts = count_file(path);
    CHECK(refused == 0);
    CHECK(counts.syncs == records);
    CHECK(counts.dropped == 0);
    CHECK(back_pressure::totals().ring_holds > holds_before);
    unlink(path.c_str());
}

TEST_CASE("back-pressure: with nobody to drain, a full ring drops, and the drop record says when") {
    const std::string path = temp_path("drops.tbdraw");
    auto writer = std::make_unique<RawWriter>();
    REQUIRE(writer->open(path.c_str(), {static_cast<uint32_t>(getpid()), 1, host_monotonic_ns(), unix_time_ns()}));
    back_pressure::set_drainer(nullptr);
    const uint64_t records = ring_registry().ring_bytes() / sizeof(RawSync) + 100;
    uint64_t refused = 0;
    const uint64_t before_ns = host_monotonic_ns();
    std::thread producer([&] {
        ThreadState& ts = thread_state();
        for (uint64_t i = 0; i < records; ++i) {
            RawSync record{};
            if (!emit_record(ts, RecordKind::Sync, record)) ++refused;
        }
    });
    producer.join();
    const uint64_t after_ns = host_monotonic_ns();
    REQUIRE(writer->drain(false, 1000));
    writer->close();
    const FileCounts counts = count_file(path);
    CHECK(refused >= 100);
    CHECK(counts.dropped == refused);
    CHECK(counts.syncs + counts.dropped == records);
    CHECK(counts.first_host_ns >= before_ns);
    CHECK(counts.first_host_ns <= counts.last_host_ns);
    CHECK(counts.last_host_ns <= after_ns);
    unlink(path.c_str());
}
