// Each communication kernel named by its communicator and launch number (communication_identity.cpp),
// on a hand-built trace whose NCCL calls cover the cases: ungrouped calls, a group launched by its
// ncclGroupEnd, a group over two communicators, transfers on a communicator of more than two ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "communication.h"
#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

struct Call {
    int64_t id, begin_ns;
    const char* library_op;  // library_calls.op
    const char* nccl_op;     // nccl_calls.op; nullptr: a group end
    int64_t communicator, nranks, rank, bytes;
};

// One process, thread 1. Communicators: A (handle 100, 4 ranks, rank 1), B (200, 2 ranks, rank 0),
// C (300, 4 ranks) for a send. Launches, in issue order, and the kernel each runs:
//   call 1   all_reduce A                 kernel at 10   A #0
//   call 2   send C (4 ranks)             kernel at 20   not numbered
//   calls 3, 4 all_reduce B, group end 5  kernel at 30   B #0
//   call 6   all_reduce A                 kernel at 40   A #1
//   calls 7 (A), 8 (B), group end 9       kernels at 50 and 60: A #2 and B #1, which is which not known
//   call 10  broadcast B                  kernel at 70   B #2
//   call 11  all_reduce A                 kernel at 80   A #3
std::string calls_trace() {
    tbdtest::TraceBuilder t("communication_identity.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    const Call calls[] = {
        {1, 1, "nccl_all_reduce", "all_reduce", 100, 4, 1, 4096},
        {2, 2, "nccl_send", "send", 300, 4, 1, 64},
        {3, 3, "nccl_all_reduce", "all_reduce", 200, 2, 0, 512},
        {4, 4, "nccl_all_reduce", "all_reduce", 200, 2, 0, 512},
        {5, 5, "nccl_group_end", nullptr, 0, 0, 0, 0},
        {6, 6, "nccl_all_reduce", "all_reduce", 100, 4, 1, 4096},
        {7, 7, "nccl_all_reduce", "all_reduce", 100, 4, 1, 4096},
        {8, 8, "nccl_all_gather", "all_gather", 200, 2, 0, 128},
        {9, 9, "nccl_group_end", nullptr, 0, 0, 0, 0},
        {10, 10, "nccl_broadcast", "broadcast", 200, 2, 0, 256},
        {11, 11, "nccl_all_reduce", "all_reduce", 100, 4, 1, 4096},
    };
    for (const Call& c : calls) {
        const std::string id = std::to_string(c.id);
        t.exec("INSERT INTO library_calls (id, process, thread, name, op, begin_ns, end_ns) VALUES (" + id +
               ", 1, 1, 'nccl', '" + c.library_op + "', " + std::to_string(c.begin_ns) + ", " +
               std::to_string(c.begin_ns + 1) + ")");
        if (c.nccl_op)
            t.exec(
                "INSERT INTO nccl_calls (library_call, process, op, communicator, rank, nranks, count, datatype, "
                "bytes) "
                "VALUES (" +
                id + ", 1, '" + c.nccl_op + "', " + std::to_string(c.communicator) + ", " + std::to_string(c.rank) +
                ", " + std::to_string(c.nranks) + ", 1, 'float32', " + std::to_string(c.bytes) + ")");
    }
    const std::pair<int64_t, int64_t> kernels[] = {{10, 1}, {20, 2}, {30, 5},  {40, 6},
                                                   {50, 9}, {60, 9}, {70, 10}, {80, 11}};
    for (const auto& [start, call] : kernels) t.kernel(start, 5, 4, 0, call);
    return t.finish(100);
}

}  // namespace

TEST_CASE("collectives named by communicator and launch number") {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    options.collective_durations = true;
    const Report r = analyze_trace(calls_trace(), options);
    REQUIRE(r.communication.ranks.size() == 1);
    const RankCommunication& rank = r.communication.ranks.front();
    REQUIRE(rank.collective_durations_ns);
    REQUIRE(rank.collective_durations_ns->size() == 8);
    // The rank's communicators with kernels: A and B, in the order of their first launch; C's only
    // launch (a transfer on 4 ranks) is not numbered.
    REQUIRE(rank.communicators.size() == 2);
    CHECK(rank.communicators[0].nranks == 4);
    CHECK(rank.communicators[0].rank == 1);
    CHECK(rank.communicators[1].nranks == 2);
    CHECK(rank.communicators[1].rank == 0);
    CHECK(rank.communicators[0].key.size() == 16);
    CHECK(rank.communicators[0].key != rank.communicators[1].key);
    using Id = std::optional<CollectiveIdentity>;
    const auto id = [](int64_t communicator, int64_t sequence) {
        return Id(CollectiveIdentity{communicator, sequence});
    };
    const std::vector<Id> want = {id(0, 0),     std::nullopt, id(1, 0), id(0, 1),
                                  std::nullopt, std::nullopt, id(1, 2), id(0, 3)};
    REQUIRE(rank.collective_identities.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        CAPTURE(i);
        CHECK(rank.collective_identities[i].has_value() == want[i].has_value());
        if (!want[i] || !rank.collective_identities[i]) continue;
        CHECK(rank.collective_identities[i]->communicator == want[i]->communicator);
        CHECK(rank.collective_identities[i]->sequence == want[i]->sequence);
    }
}

TEST_CASE("no identities without the option, nor on a trace without NCCL calls") {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    const Report plain = analyze_trace(calls_trace(), options);
    REQUIRE(plain.communication.ranks.size() == 1);
    CHECK(plain.communication.ranks.front().collective_identities.empty());
    CHECK(plain.communication.ranks.front().communicators.empty());
    tbdtest::TraceBuilder t("communication_identity_none.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    t.kernel(10, 5, 4, 0);
    options.collective_durations = true;
    const Report none = analyze_trace(t.finish(100), options);
    REQUIRE(none.communication.ranks.size() == 1);
    CHECK(none.communication.ranks.front().collective_durations_ns->size() == 1);
    CHECK(none.communication.ranks.front().collective_identities.empty());
}

namespace {

// Two communicators of one size issuing the same calls (handles 100 and 200, 2 ranks, rank 0; an
// all-reduce of 512 bytes each, alternating), each kernel its call's. `recorded`: the collector
// recorded their identities (-5 and 77: any 64-bit value, negative as SQLite stores the high ones).
std::string look_alike_trace(bool recorded) {
    tbdtest::TraceBuilder t(recorded ? "communication_identity_recorded.sqlite"
                                     : "communication_identity_alike.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    for (int64_t id = 1; id <= 4; ++id) {
        const std::string call = std::to_string(id), handle = id % 2 == 1 ? "100" : "200";
        t.exec("INSERT INTO library_calls (id, process, thread, name, op, begin_ns, end_ns) VALUES (" + call +
               ", 1, 1, 'nccl', 'nccl_all_reduce', " + call + ", " + call + ")");
        t.exec(
            "INSERT INTO nccl_calls (library_call, process, op, communicator, rank, nranks, count, datatype, bytes, "
            "communicator_identity) VALUES (" +
            call + ", 1, 'all_reduce', " + handle + ", 0, 2, 128, 'float32', 512, " +
            (recorded ? (handle == "100" ? "-5" : "77") : "NULL") + ")");
        t.kernel(10 * id, 5, 4, 0, id);
    }
    return t.finish(100);
}

std::vector<CommunicatorInfo> communicators_of(const std::string& trace) {
    AnalysisOptions options;
    options.window = WindowChoice::all;
    options.collective_durations = true;
    const Report r = analyze_trace(trace, options);
    REQUIRE(r.communication.ranks.size() == 1);
    return r.communication.ranks.front().communicators;
}

}  // namespace

TEST_CASE("communicators named by their recorded identity; look-alikes apart") {
    // Without identities (older traces) the two are known by size and first launches only: one key.
    const std::vector<CommunicatorInfo> alike = communicators_of(look_alike_trace(false));
    REQUIRE(alike.size() == 2);
    CHECK(alike[0].key == alike[1].key);
    const std::vector<CommunicatorInfo> named = communicators_of(look_alike_trace(true));
    REQUIRE(named.size() == 2);
    CHECK(named[0].key == "id-fffffffffffffffb");
    CHECK(named[1].key == "id-000000000000004d");
    CHECK(named[0].nranks == 2);
    CHECK(named[0].rank == 0);
}

namespace {

using Named = std::pair<const char*, int64_t>;  // (communicator key, launch number); key nullptr: no identity

// One rank's identities: its communicators (key, size, its number) and collectives (key, number).
RankIdentities rank_of(const std::vector<CommunicatorInfo>& communicators, const std::vector<Named>& collectives) {
    RankIdentities r;
    r.communicators = communicators;
    for (const Named& named : collectives) {
        const char* key = named.first;  // not a binding: clang 14 cannot capture one in the lambda
        const int64_t sequence = named.second;
        const auto found = std::find_if(communicators.begin(), communicators.end(),
                                        [&](const CommunicatorInfo& c) { return key && c.key == key; });
        r.collectives.push_back(found == communicators.end()
                                    ? std::nullopt
                                    : std::optional<CollectiveIdentity>(CollectiveIdentity{
                                          static_cast<int64_t>(found - communicators.begin()), sequence}));
    }
    return r;
}

}  // namespace

// Four ranks: the world w, subgroups a {0, 1} and b {2, 3}, l listed by three ranks though of two
// (look-alikes), x of three ranks with two in the trace, s of one rank. w #6 is outside rank 3's
// window; b #1 ran two kernels on each member (two collectives); rank 1 has a kernel without a call.
TEST_CASE("collectives of several ranks matched by communicator and launch number") {
    const CommunicatorInfo w0{"w", 4, 0}, w1{"w", 4, 1}, w2{"w", 4, 2}, w3{"w", 4, 3};
    const CommunicatorInfo a0{"a", 2, 0}, a1{"a", 2, 1}, b0{"b", 2, 0}, b1{"b", 2, 1};
    const std::vector<RankIdentities> ranks = {
        rank_of({w0, a0, {"l", 2, 0}, {"x", 3, 0}}, {{"w", 5}, {"a", 0}, {"w", 6}, {"l", 0}, {"x", 0}}),
        rank_of({w1, a1, {"l", 2, 1}, {"x", 3, 1}}, {{"a", 0}, {"w", 5}, {nullptr, 0}, {"w", 6}, {"l", 0}, {"x", 0}}),
        rank_of({w2, b0, {"l", 2, 0}}, {{"w", 5}, {"b", 0}, {"b", 1}, {"b", 1}, {"w", 6}, {"l", 0}}),
        rank_of({w3, b1, {"s", 1, 0}}, {{"b", 0}, {"w", 5}, {"b", 1}, {"b", 1}, {"s", 3}}),
    };
    std::vector<const RankIdentities*> given;
    for (const RankIdentities& r : ranks) given.push_back(&r);
    const CollectiveMatch m = match_collectives(given);
    CHECK(m.communicators == 3);  // w, a, b
    CHECK(m.collectives == 5);    // w #5, a #0, b #0 and b #1 twice
    const std::map<std::string, int64_t> want_left_out = {
        {"collectives not in every member's window", 1},
        {"collectives on communicators of one rank: nothing to compare", 1},
        {"collectives on communicators some of whose ranks are not in the trace", 1},
        {"collectives on communicators that look alike (same size and first launches): not told apart", 1},
        {"communication kernels without an NCCL call record", 1},
    };
    CHECK(m.left_out == want_left_out);
    REQUIRE(m.of_rank.size() == 4);
    const auto& r0 = m.of_rank[0];
    const auto& r1 = m.of_rank[1];
    const auto& r2 = m.of_rank[2];
    const auto& r3 = m.of_rank[3];
    // w #5 one collective on every rank, whatever each rank's order of it among its own.
    REQUIRE((r0[0] && r1[1] && r2[0] && r3[1]));
    CHECK((*r0[0] == *r1[1] && *r0[0] == *r2[0] && *r0[0] == *r3[1]));
    CHECK((r0[1] && r1[0] && *r0[1] == *r1[0] && *r0[1] != *r0[0]));  // a #0: ranks 0 and 1
    CHECK((r2[1] && r3[0] && *r2[1] == *r3[0] && *r2[1] != *r0[1]));  // b #0: not a #0, though alike
    CHECK((r2[2] && r2[3] && *r2[2] != *r2[3] && *r2[2] == *r3[2] && *r2[3] == *r3[3]));  // b #1's two kernels
    CHECK_FALSE(r1[2]);                                                                   // no call recorded
    CHECK_FALSE((r0[2] || r1[3] || r2[4]));                                               // w #6: not on rank 3
    CHECK_FALSE((r0[3] || r1[4] || r2[5] || r0[4] || r1[5] || r3[4]));                    // l, x, s
}
