// The build's compact in-memory forms (docs/benchmarks.md, "Trace build memory"): the sorted join
// index, kernel rows numbered by an in-place permutation, compact NULLs and edges.
#include "trace_test_support.h"

#include "sorted_index.h"
#include "tbdprof/trace/trace_model.h"

#include <string>

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
