// `tbdprof merge`'s pieces below the files: the clock offset from matched collectives, and the table
// rules covering every table of the schema. The whole merge is tested end to end on dp_train in
// tests/communication/merge_test.py.
#include "trace_test_support.h"

#include "merge_clock.h"
#include "merge_inputs.h"
#include "merge_tables.h"

#include <tbdprof/trace/schema.h>

#include <stdexcept>
#include <vector>

using namespace tbdprof;
using namespace tbdprof::test;
using trace::merge::CommunicatorSequence;

namespace {

// One communicator of `nranks` as rank `rank` saw it: all-reduces of 1024 floats ending at `ends_ns`.
CommunicatorSequence sequence(int64_t rank, int64_t nranks, const std::vector<int64_t>& ends_ns) {
    CommunicatorSequence s;
    s.process = rank + 1, s.communicator = 0x7f00 + rank, s.rank = rank, s.nranks = nranks;
    for (int64_t end : ends_ns) s.collectives.push_back({"all_reduce", "float32", 1024, -1, end});
    return s;
}

}  // namespace

TEST_CASE("merge clock: the offset is the median end-time difference of matched collectives") {
    // Rank 1's clock is 3.7 s ahead; one of its kernels ended 40 us late (its stream was busy).
    const auto reference = std::vector{sequence(0, 2, {1'000, 5'000, 9'000, 13'000, 17'000})};
    const int64_t ahead = 3'700'000'000;
    const auto other = std::vector{
        sequence(1, 2, {1'000 + ahead, 5'000 + ahead, 9'000 + ahead + 40'000, 13'000 + ahead, 17'000 + ahead})};
    const auto match = trace::merge::match_clocks(reference, other);
    REQUIRE(match);
    CHECK(match->offset_ns == -ahead);
    CHECK(match->matched == 5);
    CHECK(match->rank_pairs == 1);
    CHECK(match->spread_ns == 40'000);
    CHECK(match->agreeing == 4);
}

TEST_CASE("merge clock: an even count takes the middle two's mean; the shorter sequence bounds the match") {
    const auto reference = std::vector{sequence(0, 2, {100, 200, 300, 400, 500})};
    const auto other = std::vector{sequence(1, 2, {110, 220, 330, 440})};  // recording stopped earlier
    const auto match = trace::merge::match_clocks(reference, other);
    REQUIRE(match);
    CHECK(match->matched == 4);
    CHECK(match->offset_ns == -25);  // differences -10, -20, -30, -40
}

TEST_CASE("merge clock: no match across communicator sizes, the same rank, or different calls") {
    const auto reference = std::vector{sequence(0, 2, {100, 200})};
    CHECK_FALSE(trace::merge::match_clocks(reference, std::vector{sequence(1, 4, {100, 200})}));
    CHECK_FALSE(trace::merge::match_clocks(reference, std::vector{sequence(0, 2, {100, 200})}));
    auto different = sequence(1, 2, {100, 200});
    different.collectives[1].count = 2048;
    CHECK_FALSE(trace::merge::match_clocks(reference, std::vector{different}));
    CHECK_FALSE(trace::merge::match_clocks(reference, std::vector{sequence(1, 2, {})}));
}

TEST_CASE("merge clock: look-alike groups with recorded identities are not paired") {
    // Two groups of 2 issuing the same calls: ranks 0 of both in the reference, ranks 1 in the other
    // input, whose clock is 5 ms ahead; group B's kernels end 40 us later on both of its ranks.
    auto a0 = sequence(0, 2, {1'000}), b0 = sequence(0, 2, {41'000});
    auto a1 = sequence(1, 2, {1'000 + 5'000'000}), b1 = sequence(1, 2, {41'000 + 5'000'000});
    // Without identities each rank 1 pairs with both ranks 0: four pairs, two of them across groups.
    CHECK(trace::merge::match_clocks(std::vector{a0, b0}, std::vector{a1, b1})->rank_pairs == 4);
    a0.identity = a1.identity = -5, b0.identity = b1.identity = 77;
    const auto match = trace::merge::match_clocks(std::vector{a0, b0}, std::vector{a1, b1});
    REQUIRE(match);
    CHECK(match->rank_pairs == 2);
    CHECK(match->offset_ns == -5'000'000);
    CHECK(match->spread_ns == 0);
}

TEST_CASE("merge clock: a grouped call ends with its group's kernel; send/recv and unended groups do not count") {
    TempDir dir;
    trace::Database db = trace::create_database(dir.file("t.sqlite"));
    db.exec(trace::kTraceSchemaSql);
    db.exec(
        "INSERT INTO library_calls(id, process, thread, name, op, begin_ns, end_ns) VALUES "
        "(1, 1, 1, 'ncclAllReduce', 'nccl_all_reduce', 100, 110), (2, 1, 1, 'ncclBroadcast', 'nccl_broadcast', 2000, "
        "2010), "
        "(3, 1, 1, 'ncclAllReduce', 'nccl_all_reduce', 2100, 2110), (4, 1, 1, 'ncclGroupEnd', 'nccl_group_end', 2200, "
        "2300), "
        "(5, 1, 1, 'ncclSend', 'nccl_send', 6000, 6010), (6, 1, 1, 'ncclAllReduce', 'nccl_all_reduce', 7000, 7010);"
        "INSERT INTO nccl_calls(library_call, process, op, communicator, rank, nranks, count, datatype, bytes, root) "
        "VALUES (1, 1, 'all_reduce', 77, 0, 2, 8, 'float32', 32, NULL), (2, 1, 'broadcast', 77, 0, 2, 4, 'int32', 16, "
        "0), "
        "(3, 1, 'all_reduce', 77, 0, 2, 8, 'float32', 32, NULL), (5, 1, 'send', 77, 0, 2, 8, 'float32', 32, NULL), "
        "(6, 1, 'all_reduce', 77, 0, 2, 8, 'float32', 32, NULL);"
        "INSERT INTO kernels(id, process, device, function, start_ns, duration_ns, library_call) VALUES "
        "(1, 1, 0, 1, 200, 800, 1), (2, 1, 0, 1, 2400, 2600, 4), (3, 1, 0, 1, 6100, 100, 5);");
    const auto sequences = trace::merge::read_collectives(db);
    REQUIRE(sequences.size() == 1);
    const auto& calls = sequences[0].collectives;
    REQUIRE(calls.size() == 3);
    CHECK(calls[0].op == "all_reduce");
    CHECK(calls[0].end_ns == 1000);
    CHECK(calls[1].op == "broadcast");
    CHECK(calls[1].root == 0);
    CHECK(calls[1].end_ns == 5000);
    CHECK(calls[2].end_ns == 5000);
    CHECK(sequences[0].rank == 0);
    CHECK(sequences[0].nranks == 2);
}

TEST_CASE("merge clock: an input sharing a communicator only with a third one is aligned through it") {
    // Input 0: rank 0 of world A. Input 1: rank 1 of A and rank 0 of B (another communicator of 2,
    // other calls). Input 2: rank 1 of B only. Clocks: input 1 is 5 ms ahead of input 0, input 2 7 ms
    // behind input 1.
    std::vector<trace::merge::InputFacts> inputs(3);
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i].path = "host" + std::to_string(i);
    inputs[0].collectives = {sequence(0, 2, {1'000, 2'000})};
    auto b0 = sequence(0, 2, {3'000 + 5'000'000});
    auto b1 = sequence(1, 2, {3'000 - 2'000'000});
    b0.collectives[0].count = b1.collectives[0].count = 4096;
    inputs[1].collectives = {sequence(1, 2, {1'000 + 5'000'000, 2'000 + 5'000'000}), b0};
    inputs[2].collectives = {b1};
    const auto merged = trace::merge::align_clocks(inputs);
    CHECK(merged[1].offset_ns == -5'000'000);
    CHECK(merged[1].aligned_to == size_t{0});
    CHECK(merged[2].offset_ns == 2'000'000);
    CHECK(merged[2].aligned_to == size_t{1});
    inputs[2].collectives.clear();
    CHECK_THROWS_AS(trace::merge::align_clocks(inputs), trace::MergeError);
}

TEST_CASE("merge tables: every table of the schema has a rule, and a table without one is refused") {
    TempDir dir;
    trace::Database db = trace::create_database(dir.file("merged.sqlite"));
    db.exec(trace::kTraceSchemaSql);
    CHECK_NOTHROW(trace::merge::create_id_tables(db));
    trace::Database other = trace::create_database(dir.file("other.sqlite"));
    other.exec(trace::kTraceSchemaSql);
    other.exec("CREATE TABLE future_table (id INTEGER PRIMARY KEY)");
    CHECK_THROWS_AS(trace::merge::create_id_tables(other), std::logic_error);
}
