// The GPU scan's fast paths: the kernels of an id range in id order with NULLs as -1, a scan the
// callback stops or throws out of, and the FLOP columns of library calls.
#include <tbdprof/test_support/temp_dir.h>
#include <tbdprof/trace/fast_scans.h>
#include <tbdprof/trace/schema.h>

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

using namespace tbdprof;

namespace {

trace::Database kernel_database(const test::TempDir& dir) {
    trace::Database db = trace::create_database(dir.file("t.sqlite"));
    db.exec(trace::kTraceSchemaSql);
    db.exec(
        "INSERT INTO kernels(id, process, device, function, start_ns, duration_ns, library_call) VALUES "
        "(1, 0, 1, 9, 500, 20, NULL), (2, 0, 0, 8, 100, NULL, 5), (3, 0, 0, 7, 300, 10, 6), "
        "(4, 0, 2, 6, 50, 5, NULL)");
    return db;
}

}  // namespace

TEST_CASE("fast scans: kernels of an id range, in id order, NULL as -1") {
    test::TempDir dir;
    const trace::Database db = kernel_database(dir);
    std::vector<trace::KernelInterval> seen;
    CHECK(trace::for_each_kernel_interval(db, 2, 3, [&](const trace::KernelInterval& k) {
        seen.push_back(k);
        return true;
    }));
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].device == 0);
    CHECK(seen[0].function == 8);
    CHECK(seen[0].start_ns == 100);
    CHECK(seen[0].duration_ns == trace::KernelInterval::kNoDuration);
    CHECK(seen[0].library_call == 5);
    CHECK(seen[1].function == 7);
    CHECK(seen[1].duration_ns == 10);
    CHECK(seen[1].library_call == 6);
    // The function is gone after the scan: a second scan on the same connection registers it again.
    int count = 0;
    CHECK(trace::for_each_kernel_interval(db, 1, 4, [&](const trace::KernelInterval& k) {
        CHECK(k.function == 9 - count++);
        return true;
    }));
    CHECK(count == 4);
}

TEST_CASE("fast scans: the callback stops the scan, or throws out of it") {
    test::TempDir dir;
    const trace::Database db = kernel_database(dir);
    int count = 0;
    CHECK_FALSE(trace::for_each_kernel_interval(db, 1, 4, [&](const trace::KernelInterval&) { return ++count < 2; }));
    CHECK(count == 2);
    CHECK_THROWS_AS(trace::for_each_kernel_interval(
                        db, 1, 4, [](const trace::KernelInterval&) -> bool { throw std::logic_error("stop"); }),
                    std::logic_error);
    CHECK(trace::for_each_kernel_interval(db, 1, 4, [](const trace::KernelInterval&) { return true; }));
}

TEST_CASE("fast scans: library calls' FLOP columns, the name only without types") {
    test::TempDir dir;
    trace::Database db = trace::create_database(dir.file("t.sqlite"));
    db.exec(trace::kTraceSchemaSql);
    db.exec(
        "INSERT INTO library_calls(id, process, name, op, begin_ns, end_ns, flops, compute_type, a_type, "
        "precision) VALUES (2, 0, 'cublasSgemm_v2', 'gemm', 10, 20, 2e9, 68, 0, 'tf32'), "
        "(1, 0, 'cublasHgemm', 'gemm', 5, 6, NULL, NULL, NULL, NULL)");
    std::vector<trace::CallFlops> calls;
    std::vector<std::string> names, precisions;  // the views are valid until the next call only
    trace::CallFlopsReader reader(db, INT64_MIN, INT64_MAX);
    for (trace::CallFlops call; reader.next(call);) {
        calls.push_back(call);
        names.emplace_back(call.name);
        precisions.emplace_back(call.precision);
    }
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].id == 1);
    CHECK(calls[0].begin_ns == 5);
    CHECK_FALSE(calls[0].flops.has_value());
    CHECK_FALSE(calls[0].compute_type.has_value());
    CHECK(names[0] == "cublasHgemm");
    CHECK(precisions[0].empty());
    CHECK(calls[1].id == 2);
    CHECK(calls[1].flops == 2e9);
    CHECK(calls[1].compute_type == 68);
    CHECK(calls[1].a_type == 0);
    CHECK(names[1].empty());
    CHECK(precisions[1] == "tf32");
}
