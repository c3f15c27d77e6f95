// The builder's nccl_calls.communicator_identity from hand-made RawNcclComm records: a call takes the
// identity of its handle's latest creation before it (NCCL may hand a destroyed communicator's handle
// to a new one), none when no creation of it was recorded; 64-bit identities stored as SQLite's
// signed integers, bit for bit.
#include "trace_test_support.h"

using namespace tbdprof;
using namespace tbdprof::test;

namespace {

constexpr uint64_t kStart = 1'000'000;
constexpr uint64_t kHighIdentity = 0xfedc'ba98'7654'3210ULL;  // the top bit set: negative in SQLite

void created(RawFileWriter& w, uint64_t ts, uint64_t handle, uint64_t identity) {
    raw::RawNcclComm r{};
    r.host_ns = kStart + ts;
    r.communicator = handle;
    r.identity = identity;
    r.rank = 0;
    r.nranks = 2;
    r.origin = raw::NcclCommOrigin::InitRank;
    w.record(raw::RecordKind::NcclComm, 77, r);
}

void all_reduce(RawFileWriter& w, uint64_t ts, uint64_t handle) {
    raw::RawLibraryCall c{};
    c.begin_host_ns = kStart + ts;
    c.end_host_ns = kStart + ts + 1;
    c.name_string = w.string("ncclAllReduce");
    c.op = raw::LibraryOp::NcclAllReduce;
    c.workspace = handle;
    c.n = 2;
    c.k = 0;
    c.m = 16;
    c.batch = -1;
    c.a_type = 7;  // ncclFloat32
    w.record(raw::RecordKind::LibraryCall, 77, c);
}

}  // namespace

TEST_CASE("builder: NCCL calls carry their communicator's recorded identity") {
    TempDir dir;
    RawFileWriter w(77, kStart);
    w.process_info(std::string_view("./p\0", 4), "/bin/p", "node");
    w.thread(77, "main", kStart);
    w.device(0, "Simulated H100", true);
    created(w, 10, 0xa0, kHighIdentity);
    all_reduce(w, 20, 0xa0);
    all_reduce(w, 30, 0xb0);   // a communicator whose creation was not recorded
    created(w, 40, 0xa0, 42);  // the handle reused by a new communicator
    all_reduce(w, 50, 0xa0);
    w.save(dir.path());
    build(dir);
    auto db = trace::open_trace(dir.file("trace.sqlite"));
    CHECK(query_int(db, "SELECT count(*) FROM nccl_calls") == 3);
    CHECK(query_int(db,
                    "SELECT communicator_identity FROM nccl_calls n JOIN library_calls l ON l.id = n.library_call "
                    "WHERE l.begin_ns = (SELECT min(begin_ns) FROM library_calls)") ==
          static_cast<int64_t>(kHighIdentity));
    CHECK(query_is_null(db, "SELECT communicator_identity FROM nccl_calls WHERE communicator = 176"));
    CHECK(query_int(db,
                    "SELECT communicator_identity FROM nccl_calls n JOIN library_calls l ON l.id = n.library_call "
                    "WHERE l.begin_ns = (SELECT max(begin_ns) FROM library_calls)") == 42);
}
