// Events per second through the collector's per-thread rings and writer thread, with synthetic
// records: the real RawWriter (draining every 20 ms, 2 ms while a ring is over a quarter full) into a
// real file, fed by THREADS producers emitting launch-sized records as fast as they can.
//
//   tbdprof_writer_bench [EVENTS_PER_THREAD] [THREADS] [DIR]
//
// Prints: threads=T events=E record_bytes=B seconds=S events_per_second=R full_ring_waits=W
//         producer_cpu_ns_per_event=P writer_cpu_ns_per_event=C file_bytes=F
// A producer that finds its ring full yields and retries (counted as full_ring_waits): nothing is
// dropped, so `events` all reach the file, which is read back and counted.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tbdprof/collector/clock.h"
#include "tbdprof/collector/raw_writer.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/trace/raw_reader.h"

using namespace tbdprof;

namespace {

uint64_t clock_ns(clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A launch with three pointer candidates: what a small kernel with a few pointer arguments writes.
struct SyntheticLaunch {
    raw::RawLaunch launch;
    raw::RawPointerCandidate candidates[3];
};

struct ProducerResult {
    uint64_t full_waits = 0;
    uint64_t cpu_ns = 0;
};

void produce(uint64_t events, std::atomic<int>& ready, int threads, ProducerResult& result) {
    collector::ThreadState& ts = collector::thread_state();
    ready.fetch_add(1);
    while (ready.load() < threads) {
    }
    const uint64_t cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    SyntheticLaunch record{};
    record.launch.candidate_count = 3;
    for (uint64_t i = 0; i < events; ++i) {
        record.launch.host_ns = i;
        record.launch.sequence = i;
        for (auto& c : record.candidates) c.value = 0x7f0000000000ull + i * 64;
        constexpr size_t size = sizeof record;
        uint8_t* p;
        while ((p = collector::reserve_record(ts, raw::RecordKind::Launch, size)) == nullptr) {
            // reserve_record counted a ring drop; the bench wants none lost, so undo and wait.
            ts.slot->dropped.fetch_sub(1, std::memory_order_relaxed);
            ++result.full_waits;
            std::this_thread::yield();
        }
        std::memcpy(p + sizeof(raw::RawRecordHeader), reinterpret_cast<const uint8_t*>(&record) + sizeof(raw::RawRecordHeader),
                    size - sizeof(raw::RawRecordHeader));
        collector::commit_record(ts, size);
    }
    result.cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
}

}  // namespace

namespace {

constexpr const char* kUsage =
    "usage: tbdprof_writer_bench [EVENTS [THREADS [DIR]]]\n"
    "Events per second through the collector's rings and writer: THREADS producers (default 1) each emit\n"
    "EVENTS 128-byte launch records (default 2000000) into a raw file in DIR (default $TMPDIR or /tmp),\n"
    "which is read back, counted and removed.\n";

// A whole number of at least 1 and at most `max`; false otherwise.
bool parse_count(const char* text, uint64_t max, uint64_t& value) {
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || text[0] == '-' || parsed == 0 || parsed > max) return false;
    value = parsed;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (argv[i][0] == '-') {
            std::fprintf(stderr, "%s: unknown option %s\n%s", "tbdprof_writer_bench", argv[i], kUsage);
            return 2;
        }
    }
    uint64_t per_thread = 2'000'000, thread_count = 1;
    const bool good = argc <= 4 && (argc <= 1 || parse_count(argv[1], uint64_t{1} << 40, per_thread)) &&
                      (argc <= 2 || parse_count(argv[2], 512, thread_count)) && (argc <= 3 || argv[3][0] != '-');
    if (!good) {
        std::fprintf(stderr, "tbdprof_writer_bench: bad arguments\n%s", kUsage);
        return 2;
    }
    const int threads = static_cast<int>(thread_count);
    const std::string dir = argc > 3 ? argv[3] : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    const std::string path = dir + "/tbdprof-writer-bench-" + std::to_string(getpid()) + ".tbdraw";

    auto writer = std::make_unique<collector::RawWriter>();
    if (!writer->open(path.c_str(), {static_cast<uint32_t>(getpid()), 1, collector::host_monotonic_ns(),
                                     collector::unix_time_ns()})) {
        std::perror(path.c_str());
        return 1;
    }
    writer->start_thread();
    std::vector<ProducerResult> results(static_cast<size_t>(threads));
    std::atomic<int> ready{0};
    const uint64_t process_cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    const uint64_t start = clock_ns(CLOCK_MONOTONIC);
    std::vector<std::thread> producers;
    for (int t = 0; t < threads; ++t) {
        producers.emplace_back(produce, per_thread, std::ref(ready), threads, std::ref(results[static_cast<size_t>(t)]));
    }
    for (auto& p : producers) p.join();
    writer->stop_thread();
    if (!writer->drain(false, 1000)) return 1;  // the last records: the clock stops when all are in the file
    const double seconds = static_cast<double>(clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
    const uint64_t process_cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - process_cpu_start;
    const uint64_t file_bytes = writer->bytes_written();
    writer->close();

    // Count what reached the file: the figure is only valid if every event is there.
    uint64_t launches = 0;
    trace::RawFile file;
    std::string error;
    if (!file.open(path, error)) {
        std::fprintf(stderr, "writer bench: %s\n", error.c_str());
        return 1;
    }
    auto cursor = file.records();
    for (trace::RawRecordView r{}; cursor.next(r);) launches += r.kind == raw::RecordKind::Launch;
    unlink(path.c_str());
    const uint64_t events = per_thread * static_cast<uint64_t>(threads);
    if (launches != events) {
        std::fprintf(stderr, "writer bench: %llu of %llu events reached the file\n",
                     static_cast<unsigned long long>(launches), static_cast<unsigned long long>(events));
        return 1;
    }
    uint64_t producer_cpu = 0, waits = 0;
    for (const auto& r : results) {
        producer_cpu += r.cpu_ns;
        waits += r.full_waits;
    }
    const uint64_t writer_cpu = process_cpu > producer_cpu ? process_cpu - producer_cpu : 0;
    std::printf("threads=%d events=%llu record_bytes=%zu seconds=%.3f events_per_second=%.0f full_ring_waits=%llu "
                "producer_cpu_ns_per_event=%.1f writer_cpu_ns_per_event=%.1f file_bytes=%llu\n",
                threads, static_cast<unsigned long long>(events), sizeof(SyntheticLaunch), seconds,
                static_cast<double>(events) / seconds, static_cast<unsigned long long>(waits),
                static_cast<double>(producer_cpu) / static_cast<double>(events),
                static_cast<double>(writer_cpu) / static_cast<double>(events),
                static_cast<unsigned long long>(file_bytes));
    return 0;
}
