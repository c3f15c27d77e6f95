// Compares a tbdprof trace with the simulated GPU's ground truth for the same run:
//   trace_vs_truth TRACE TRUTH [--labels LABELS]
//   trace_vs_truth --count-kernels TRACE
// Same kernels (names, device start/end, grid, block), copies, sets, allocations and frees; with
// --labels, the sample's kernel -> allocation edges (GEMM kernels read every weight tensor, some kernel
// touches every gradient and activation). Prints what differs; exit status 0 when nothing does.
#include "truth_file.h"

#include <tbdprof/trace/trace_reader.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

using namespace tbdprof;

namespace {

int g_failures = 0;

template <class Tuple>
std::string show(const Tuple& t) {
    std::ostringstream out;
    std::apply([&](const auto&... v) { ((out << v << ' '), ...); }, t);
    return out.str();
}

// Compares two multisets of rows; prints up to 5 rows missing on each side.
template <class Tuple>
void compare(const char* what, std::vector<Tuple> truth, std::vector<Tuple> trace) {
    std::sort(truth.begin(), truth.end());
    std::sort(trace.begin(), trace.end());
    if (truth == trace) {
        std::printf("ok    %-12s %zu match the truth\n", what, truth.size());
        return;
    }
    ++g_failures;
    std::vector<Tuple> missing, extra;
    std::set_difference(truth.begin(), truth.end(), trace.begin(), trace.end(), std::back_inserter(missing));
    std::set_difference(trace.begin(), trace.end(), truth.begin(), truth.end(), std::back_inserter(extra));
    std::printf("FAIL  %-12s truth %zu, trace %zu; %zu missing from the trace, %zu extra\n", what, truth.size(),
                trace.size(), missing.size(), extra.size());
    for (size_t i = 0; i < std::min<size_t>(5, missing.size()); ++i) std::printf("  missing: %s\n", show(missing[i]).c_str());
    for (size_t i = 0; i < std::min<size_t>(5, extra.size()); ++i) std::printf("  extra:   %s\n", show(extra[i]).c_str());
}

std::string truth_copy_kind(const std::string& trace_kind) {
    if (trace_kind == "htod") return "HtoD";
    if (trace_kind == "dtoh") return "DtoH";
    if (trace_kind == "dtod") return "DtoD";
    if (trace_kind == "htoh") return "HtoH";
    return trace_kind;
}

using KernelKey = std::tuple<int64_t, int64_t, int64_t, std::string, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
using CopyKey = std::tuple<int64_t, int64_t, int64_t, std::string, int64_t, int64_t, int64_t>;
using SetKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
using AllocKey = std::tuple<int64_t, int64_t, int64_t, std::string>;
using FreeKey = std::tuple<int64_t, int64_t>;

void check_activity(trace::Database& db, const test::Truth& truth) {
    std::vector<KernelKey> want, got;
    for (const auto& k : truth.kernels) {
        want.emplace_back(k.pid, k.start, k.end, k.name, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1],
                          k.block[2], k.shared);
    }
    trace::Statement kernels(db, "SELECT p.pid, k.start_ns + r.start_monotonic_ns, k.end_ns + r.start_monotonic_ns, "
                                 "k.mangled, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, "
                                 "k.shared_bytes FROM kernel_view k JOIN processes p ON p.id = k.process, run r");
    while (kernels.step()) {
        got.emplace_back(kernels.column_int(0), kernels.column_int(1), kernels.column_int(2), kernels.column_text(3),
                         kernels.column_int(4), kernels.column_int(5), kernels.column_int(6), kernels.column_int(7),
                         kernels.column_int(8), kernels.column_int(9), kernels.column_int(10));
    }
    compare("kernels", want, got);

    std::vector<CopyKey> want_copies, got_copies;
    for (const auto& c : truth.copies) {
        want_copies.emplace_back(c.pid, c.start, c.end, c.kind, c.bytes, static_cast<int64_t>(c.src),
                                 static_cast<int64_t>(c.dst));
    }
    trace::Statement copies(db, "SELECT p.pid, c.start_ns + r.start_monotonic_ns, c.start_ns + c.duration_ns + "
                                "r.start_monotonic_ns, c.kind, c.bytes, c.src, c.dst FROM copies c JOIN processes p "
                                "ON p.id = c.process, run r");
    while (copies.step()) {
        got_copies.emplace_back(copies.column_int(0), copies.column_int(1), copies.column_int(2),
                                truth_copy_kind(copies.column_text(3)), copies.column_int(4), copies.column_int(5),
                                copies.column_int(6));
    }
    compare("copies", want_copies, got_copies);

    std::vector<SetKey> want_sets, got_sets;
    for (const auto& s : truth.sets)
        want_sets.emplace_back(s.pid, s.start, s.end, s.bytes, static_cast<int64_t>(s.address), s.value);
    trace::Statement sets(db, "SELECT p.pid, s.start_ns + r.start_monotonic_ns, s.start_ns + s.duration_ns + "
                              "r.start_monotonic_ns, s.bytes, s.dst, s.value FROM sets s JOIN processes p ON "
                              "p.id = s.process, run r");
    while (sets.step()) {
        got_sets.emplace_back(sets.column_int(0), sets.column_int(1), sets.column_int(2), sets.column_int(3),
                              sets.column_int(4), sets.column_int(5));
    }
    compare("sets", want_sets, got_sets);
}

void check_memory(trace::Database& db, const test::Truth& truth) {
    std::vector<AllocKey> want_allocs, got_allocs;
    std::vector<FreeKey> want_frees, got_frees;
    for (const auto& m : truth.memory) {
        if (m.is_alloc) want_allocs.emplace_back(m.pid, static_cast<int64_t>(m.address), m.bytes, m.kind);
        else want_frees.emplace_back(m.pid, static_cast<int64_t>(m.address));
    }
    trace::Statement allocs(db, "SELECT p.pid, a.address, a.bytes, a.kind, a.free_ns IS NOT NULL FROM allocations a "
                                "JOIN processes p ON p.id = a.process");
    while (allocs.step()) {
        got_allocs.emplace_back(allocs.column_int(0), allocs.column_int(1), allocs.column_int(2), allocs.column_text(3));
        if (allocs.column_int(4) != 0) got_frees.emplace_back(allocs.column_int(0), allocs.column_int(1));
    }
    compare("allocations", want_allocs, got_allocs);
    compare("frees", want_frees, got_frees);
}

// Labelled tensors of `category` (at their first lifetime) touched by a kernel whose name matches
// `kernel_like`: all of them when `all`, else at least one.
void check_edges(trace::Database& db, const std::vector<test::Label>& labels, const std::string& category,
                 const std::string& kernel_like, bool all) {
    size_t checked = 0, missing = 0;
    std::set<uint64_t> seen;
    for (const auto& label : labels) {
        if (!label.is_alloc || label.category != category || !seen.insert(label.address).second) continue;
        ++checked;
        trace::Statement edges(db, "SELECT count(*) FROM kernel_allocations e JOIN allocations a ON a.id = e.allocation "
                                   "JOIN kernel_view k ON k.id = e.kernel WHERE a.address = ?1 AND a.bytes = ?2 "
                                   "AND k.name LIKE ?3");
        edges.bind(1, static_cast<int64_t>(label.address)).bind(2, static_cast<int64_t>(label.bytes)).bind(3, kernel_like);
        if (!edges.step() || edges.column_int(0) == 0) {
            if (missing++ < 5 && all)
                std::printf("  no edge from a kernel like '%s' to %s 0x%llx (%llu bytes)\n", kernel_like.c_str(),
                            category.c_str(), static_cast<unsigned long long>(label.address),
                            static_cast<unsigned long long>(label.bytes));
        }
    }
    if (checked == 0) {
        std::printf("FAIL  edges        no '%s' labels to check\n", category.c_str());
        ++g_failures;
    } else if (all ? missing > 0 : missing == checked) {
        std::printf("FAIL  edges        %zu of %zu %s tensors lack an edge from kernels like '%s'\n", missing, checked,
                    category.c_str(), kernel_like.c_str());
        ++g_failures;
    } else {
        std::printf("ok    edges        %zu of %zu %s tensors touched by kernels like '%s'\n", checked - missing,
                    checked, category.c_str(), kernel_like.c_str());
    }
}

void check_run(trace::Database& db) {
    trace::Statement run(db, "SELECT clock_source, host_timed_kernels, (SELECT count(*) FROM dropped_events), "
                             "truncated_files, simulated_device FROM run");
    if (!run.step()) {
        std::printf("FAIL  run          no run row\n");
        ++g_failures;
        return;
    }
    const bool good = run.column_text(0) == "cupti" && run.column_int(1) == 0 && run.column_int(2) == 0 &&
                      run.column_int(3) == 0 && run.column_int(4) == 1;
    std::printf("%s  run          clock %s, %lld host-timed kernels, %lld drops, %lld truncated files, simulated %lld\n",
                good ? "ok  " : "FAIL", run.column_text(0).c_str(), static_cast<long long>(run.column_int(1)),
                static_cast<long long>(run.column_int(2)), static_cast<long long>(run.column_int(3)),
                static_cast<long long>(run.column_int(4)));
    if (!good) ++g_failures;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--count-kernels") {  // for shell tests
        try {
            trace::Database db = trace::open_trace(argv[2]);
            std::printf("%lld\n", static_cast<long long>(db.query_int("SELECT count(*) FROM kernels")));
            return 0;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "trace_vs_truth: %s\n", e.what());
            std::printf("0\n");
            return 1;
        }
    }
    if (argc != 3 && argc != 5) {
        std::fprintf(stderr, "usage: trace_vs_truth TRACE TRUTH [--labels LABELS]\n");
        return 2;
    }
    try {
        trace::Database db = trace::open_trace(argv[1]);
        const test::Truth truth = test::read_truth(argv[2]);
        check_run(db);
        check_activity(db, truth);
        check_memory(db, truth);
        if (argc == 5) {
            const auto labels = test::read_labels(argv[4]);
            // Weights include biases, which only the bias kernels read: every weight tensor is touched
            // by some kernel, and the GEMMs (cuBLAS's kernels, seen through cuGetProcAddress) touch
            // weight matrices.
            check_edges(db, labels, "weights", "%", true);
            check_edges(db, labels, "weights", "%gemm%", false);
            check_edges(db, labels, "gradients", "%", true);
            check_edges(db, labels, "activations", "%", true);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trace_vs_truth: %s\n", e.what());
        return 1;
    }
    return g_failures == 0 ? 0 : 1;
}
