// The build's compact in-memory forms (docs/benchmarks.md, "Trace build memory"): the sorted join
// index, kernel rows numbered by an in-place permutation, compact NULLs and edges.
#include "trace_test_support.h"

#include "raw_process.h"
#include "sorted_index.h"
#include "spill_sorter.h"
#include "tbdprof/trace/trace_model.h"

#include <malloc.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace tbdprof;
using namespace tbdprof::test;

TEST_CASE("sorted index: lookups after finish, keys added in any order, the last value of a key kept") {
    trace::detail::SortedIndex<uint32_t> index;
    for (uint64_t key : {40, 10, 30, 10, 20}) index.add(key, static_cast<uint32_t>(key + index.size()));
    index.add(30, 99);  // a second value for 30 replaces the first, as map[key] = value does
    index.finish();
    CHECK(index.size() == 4);
    REQUIRE(index.find(10) != index.end());
    CHECK(index.find(10)->second == 13);  // the later of the two 10s (added fourth: 10 + 3)
    CHECK(index.find(30)->second == 99);
    CHECK(index.find(40)->second == 40);
    CHECK(index.find(25) == index.end());
    CHECK_FALSE(index.contains(0));
    CHECK(index.contains(20));
    trace::detail::SortedIndex<uint32_t> empty;
    empty.finish();
    CHECK(empty.find(1) == empty.end());
}

TEST_CASE("launch records: offsets kept in 4 B read back whole, past 4 GiB and across several") {
    // A raw file of over 4 GiB (some 20 M launches): offsets keep their low 32 bits, and the launch
    // where the high bits change is noted apart.
    const uint64_t gib4 = uint64_t{1} << 32;
    const std::vector<uint64_t> offsets = {16, 4096, gib4 - 64, gib4 + 8, gib4 + 100, 3 * gib4 + 4, 3 * gib4 + 4000};
    trace::detail::LaunchRecords launches;
    launches.reserve(offsets.size());
    for (uint64_t offset : offsets) launches.add(offset);
    REQUIRE(launches.size() == offsets.size());
    for (size_t i = 0; i < offsets.size(); ++i) {
        CAPTURE(i);
        CHECK(launches.offset(i) == offsets[i]);
    }
}

TEST_CASE("compact optional: NULL, zero and negative values stay apart and read back as an Opt") {
    using trace::detail::CompactOpt;
    using trace::detail::Opt;
    CHECK_FALSE(CompactOpt().has_value());
    CHECK_FALSE(CompactOpt(std::nullopt).has_value());
    CHECK(CompactOpt(int64_t{0}).has_value());
    CHECK(*CompactOpt(int64_t{-5}) == -5);
    CHECK(Opt(CompactOpt(Opt())) == Opt());
    CHECK(Opt(CompactOpt(Opt(7))) == Opt(7));
    CHECK(CompactOpt().value_or(3) == 3);
}

TEST_CASE("spill sorter: runs on disk merged in order, equal keys in the order added, visited twice") {
    struct Item {
        int key, added;
    };
    struct ByKey {
        bool operator()(const Item& a, const Item& b) const { return a.key < b.key; }
    };
    // A buffer of 4 items: 23 items make 6 runs in the temporary file.
    trace::detail::SpillSorter<Item, ByKey> sorter(4);
    for (int i = 0; i < 23; ++i) sorter.add({(i * 7) % 5, i});
    CHECK(sorter.size() == 23);
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<Item> out;
        sorter.for_each([&](const Item& item) { out.push_back(item); });
        REQUIRE(out.size() == 23);
        for (size_t i = 1; i < out.size(); ++i) {
            CAPTURE(i);
            CHECK(out[i - 1].key <= out[i].key);
            if (out[i - 1].key == out[i].key) CHECK(out[i - 1].added < out[i].added);
        }
    }
    // Fewer items than the buffer: sorted in memory, no file.
    trace::detail::SpillSorter<Item, ByKey> small(64);
    for (int i : {3, 1, 2, 1}) small.add({i, static_cast<int>(small.size())});
    std::vector<int> added;
    small.for_each([&](const Item& item) { added.push_back(item.added); });
    CHECK(added == std::vector<int>{1, 3, 2, 0});
}

TEST_CASE("builder: kernels recorded out of start order are numbered by start, and edges follow them") {
    // Device start order is a permutation of launch order with cycles of length 1, 2 and 3, so the
    // in-place renumbering must move each row exactly once.
    constexpr uint64_t kStart = 1'000'000;
    constexpr uint64_t kBuffer = 0x7000'0000;
    const uint64_t start_rank[] = {2, 0, 1, 4, 3, 5};  // launch i starts rank-th
    TempDir dir;
    RawFileWriter w(77, kStart);
    w.alloc(77, kStart + 10, kBuffer, 1 << 20);
    for (uint64_t i = 0; i < std::size(start_rank); ++i) {
        const std::string name = "k" + std::to_string(i);
        // Launch i passes a pointer i * 16 bytes into the buffer: the edge names its launch.
        const uint64_t seq = w.launch(77, kStart + 100 + i, name, {{kBuffer + i * 16, 0}});
        const uint64_t begin = kStart + 1000 + start_rank[i] * 100;
        w.device_kernel(seq, begin, begin + 50, name);
    }
    w.save(dir.path());
    const auto result = build(dir);
    CHECK(result.kernels == std::size(start_rank));
    CHECK(result.edges == std::size(start_rank));
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    for (uint64_t i = 0; i < std::size(start_rank); ++i) {
        const int64_t id = static_cast<int64_t>(start_rank[i]) + 1;
        CAPTURE(i);
        CHECK(query_text(db, "SELECT name FROM kernel_view WHERE id = " + std::to_string(id)) ==
              "k" + std::to_string(i));
        CHECK(query_int(db, "SELECT offset FROM kernel_allocations WHERE kernel = " + std::to_string(id)) ==
              static_cast<int64_t>(i * 16));
    }
    CHECK(query_int(db, "SELECT count(*) FROM kernels WHERE queued_ns IS NULL OR duration_ns != 50") == 0);
}

TEST_CASE("builder: launches read back from the raw file give edges for the candidates each record holds") {
    // The build keeps only each launch record's offset and reads it again from the mapped file: a
    // record that declares more pointer candidates than it holds (cut by its writer) gives edges for
    // those it holds, and the launches after it are read at their own offsets.
    constexpr uint64_t kStart = 1'000'000;
    constexpr uint64_t kBuffer = 0x7000'0000;
    TempDir dir;
    RawFileWriter w(79, kStart);
    w.alloc(79, kStart + 10, kBuffer, 1 << 20);
    const size_t cut_at = w.bytes().size();
    const uint64_t cut = w.launch(79, kStart + 100, "cut", {{kBuffer + 8, 0}});
    // Declares three candidates; the record holds one.
    const uint16_t declared = 3;
    std::memcpy(w.bytes().data() + cut_at + offsetof(raw::RawLaunch, candidate_count), &declared, sizeof declared);
    w.device_kernel(cut, kStart + 200, kStart + 250, "cut");
    const uint64_t whole = w.launch(79, kStart + 300, "whole", {{kBuffer + 16, 0}, {kBuffer + 24, 1}});
    w.device_kernel(whole, kStart + 400, kStart + 450, "whole");
    w.save(dir.path());
    const auto result = build(dir);
    REQUIRE(result.ok);
    CHECK(result.kernels == 2);
    CHECK(result.edges == 3);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_text(db,
                     "SELECT group_concat(offset) FROM (SELECT a.offset FROM kernel_allocations a JOIN kernel_view k "
                     "ON k.id = a.kernel WHERE k.name = 'cut' ORDER BY a.offset)") == "8");
    CHECK(query_text(db,
                     "SELECT group_concat(offset) FROM (SELECT a.offset FROM kernel_allocations a JOIN kernel_view k "
                     "ON k.id = a.kernel WHERE k.name = 'whole' ORDER BY a.offset)") == "16,24");
}

namespace {

// The environment that makes the test case below measure a build: the run directory, and the pipe
// to write the growth to.
constexpr const char* kMeasureDirVariable = "TBDPROF_TEST_MEASURE_BUILD_DIR";
constexpr const char* kMeasureFdVariable = "TBDPROF_TEST_MEASURE_BUILD_FD";

// Peak resident memory a build of `dir` adds, in bytes: measured in a fresh process (this program
// run again for the test case below), so that neither the test's own memory nor the heap that earlier
// tests left counts. (A forked child inherits that heap: after earlier tests freed large blocks,
// glibc's dynamic mmap threshold has risen and freed chunks lie about, and the same build measured
// 70 B per kernel alone and 90 B after the other tests.)
int64_t build_peak_growth_bytes(const TempDir& dir) {
    int channel[2];
    REQUIRE(pipe(channel) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        close(channel[0]);
        setenv(kMeasureDirVariable, dir.path().c_str(), 1);
        setenv(kMeasureFdVariable, std::to_string(channel[1]).c_str(), 1);
        execl("/proc/self/exe", "tbdprof_trace_test", "--test-case=builder: peak memory of one build*", nullptr);
        _exit(127);
    }
    close(channel[1]);
    long long growth = -1;
    const auto got = read(channel[0], &growth, sizeof growth);
    close(channel[0]);
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(got == static_cast<ssize_t>(sizeof growth));
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return growth;
}

// A run of `kernels` launches, each with four pointer arguments into one buffer and its device record.
// CUPTI ties the records to the launching thread (raw::kThreadCorrelationTag) as the collector has it,
// or, `by_sequence`, to each launch's sequence.
void write_launch_loop(const TempDir& dir, uint64_t kernels, bool by_sequence) {
    constexpr uint64_t kStart = 1'000'000;
    constexpr uint64_t kBuffer = 0x7000'0000;
    RawFileWriter w(78, kStart);
    w.write_each_string_once();
    w.alloc(78, kStart + 10, kBuffer, 1 << 20);
    for (uint64_t i = 0; i < kernels; ++i) {
        const uint64_t t = kStart + 100 + i * 10;
        const uint64_t seq =
            w.launch(78, t, "loop_kernel", {{kBuffer, 0}, {kBuffer + 64, 1}, {kBuffer + 128, 2}, {kBuffer + 192, 3}});
        if (by_sequence)
            w.device_kernel(seq, t + 5, t + 8, "loop_kernel");
        else
            w.device_kernel_of_thread(78, 1 + i, t + 5, t + 8, "loop_kernel");
    }
    w.process_end();
    w.save(dir.path());
}

// The slope the test allows, for both loops. Measured 2026-12-03 (this test's runs, four pointer
// arguments per kernel, each build in a fresh process): 57 B per kernel with the records tied to the
// thread, 62 B by sequence: the device record (48 B), the launch's offset (4 B), the pairs (two 4 B
// indices) and each thread's lists of 4 B indices, reserved at their size. Main before that: 92 B
// tied to the thread and 77 B by sequence (pairs of 16 B, 8 B indices, the correlation index's 16 B
// held through the pairing); 279 B by sequence before launches were read back from the raw file,
// 479 B before the kernel stage. Holding the decoded launches again, the kernel rows (120 B) or the
// edges (128 B) crosses the bound, and so does keeping the pages of the raw file read back resident
// (315 B measured without the drop).
constexpr double kMaxBytesPerKernel = 70;

}  // namespace

// Run by build_peak_growth_bytes in a fresh process; does nothing otherwise.
TEST_CASE("builder: peak memory of one build in a fresh process (run by the memory test below)") {
    const char* dir = std::getenv(kMeasureDirVariable);
    const char* fd = std::getenv(kMeasureFdVariable);
    if (dir == nullptr || fd == nullptr) return;
    const auto status_kib = [](const char* field) {
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field)));
        return -1LL;
    };
    // SQLite's page cache (up to 64 MiB while writing) is a fixed term that a small build does not
    // fill; held to a few MiB here, it does not pass for memory per kernel.
    sqlite3_soft_heap_limit64(int64_t{4} << 20);
    std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current RSS
    const long long before_kib = status_kib("VmRSS:");
    trace::BuildOptions options;
    options.run_dir = dir;
    options.output = std::string(dir) + "/trace.sqlite";
    const bool ok = trace::build_trace(options).ok;
    const long long growth = ok ? (status_kib("VmHWM:") - before_kib) * 1024 : -1;
    [[maybe_unused]] const auto written = write(std::atoi(fd), &growth, sizeof growth);
    _exit(ok ? 0 : 1);
}

// GCC says a sanitizer is on by __SANITIZE_*__, clang 14 (the sanitizer build's compiler) by __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TBD_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TBD_TEST_SANITIZED 1
#endif
#endif

TEST_CASE("builder: memory per kernel does not grow with the run's length beyond its per-kernel term") {
#ifdef TBD_TEST_SANITIZED
    // Sanitizers' shadow memory and quarantine make resident memory no measure of the build's own.
    return;
#endif
    // Two runs, 4x apart: the slope between them is what each further kernel costs the build. The
    // smaller already fills the build's fixed buffers (16 MiB each for kernel rows and edges on
    // their way to disk), so they do not pass for memory per kernel.
    constexpr uint64_t kSmall = 150'000, kLarge = 600'000;
    TempDir small_dir, large_dir;
    int64_t large_bytes = 0;
    for (const bool by_sequence : {false, true}) {
        write_launch_loop(small_dir, kSmall, by_sequence);
        write_launch_loop(large_dir, kLarge, by_sequence);
        const int64_t small_bytes = build_peak_growth_bytes(small_dir);
        large_bytes = build_peak_growth_bytes(large_dir);
        const double bytes_per_kernel = double(large_bytes - small_bytes) / double(kLarge - kSmall);
        const std::string how = by_sequence ? "by sequence" : "tied to the thread";
        INFO(how, ": peak growth ", small_bytes, " B at ", kSmall, " kernels, ", large_bytes, " B at ", kLarge,
             " kernels: ", bytes_per_kernel, " B per further kernel");
        CHECK(bytes_per_kernel < kMaxBytesPerKernel);
        CHECK(large_bytes > 0);
    }
    // The rows that do not fit the stage's buffers go to TMPDIR: where it cannot be written, the
    // build says so and writes nothing.
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string saved = tmpdir ? tmpdir : "";
    setenv("TMPDIR", (small_dir.path() + "/missing").c_str(), 1);
    trace::BuildOptions options;
    options.run_dir = small_dir.path();
    options.output = small_dir.file("unwritable.sqlite");
    const trace::BuildResult failed = trace::build_trace(options);
    if (tmpdir)
        setenv("TMPDIR", saved.c_str(), 1);
    else
        unsetenv("TMPDIR");
    CHECK_FALSE(failed.ok);
    CHECK(failed.error.find("set TMPDIR") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(options.output));
}
