// Compares the library_calls of a recorded cuBLASLt program with what the program did (its
// expectation file) and with the simulated GPU's ground truth:
//   lt_trace_check TRACE TRUTH EXPECTED
// Each successful cublasLtMatmul must be one row, in call order, with its m, n, k, batch, FLOPs
// (2*m*n*k*batch), A, B and D pointers, workspace, types and transpose; the kernels attributed to
// the row (kernels.library_call) must be the truth's kernels of that call: their FLOPs add up to the
// row's, their names carry the epilogue. Every FLOP-annotated kernel of the truth belongs to a call.
#include <tbdprof/trace/trace_reader.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "truth_file.h"

using namespace tbdprof;

namespace {

int g_failures = 0;

void fail(const std::string& what) {
    if (++g_failures <= 20) std::printf("FAIL: %s\n", what.c_str());
}

struct Expected {
    int64_t m = 0, n = 0, k = 0, batch = 0;
    uint64_t a = 0, b = 0, d = 0, workspace = 0, workspace_bytes = 0;
    int a_type = 0, compute_type = 0, transa = 0;
    std::string epilogue_tag;  // "-" for none
};

std::vector<Expected> read_expected(const std::string& path) {
    std::ifstream in(path);
    std::vector<Expected> rows;
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        Expected e;
        fields >> e.m >> e.n >> e.k >> e.batch >> e.a >> e.b >> e.d >> e.workspace >> e.workspace_bytes >> e.a_type >>
            e.compute_type >> e.transa >> e.epilogue_tag;
        if (!fields) throw std::runtime_error("bad expectation line: " + line);
        rows.push_back(e);
    }
    return rows;
}

struct Row {
    int64_t id, m, n, k, batch, a, b, c, workspace, workspace_bytes, a_type, compute_type, transa;
    double flops;
    std::string name, op;
};

std::vector<Row> read_calls(const trace::Database& db) {
    trace::Statement s(db, "SELECT id, name, op, m, n, k, batch, flops, a, b, c, workspace, workspace_bytes, a_type, "
                           "compute_type, transa FROM library_calls ORDER BY begin_ns, id");
    std::vector<Row> rows;
    while (s.step()) {
        rows.push_back({s.column_int(0), s.column_int(3), s.column_int(4), s.column_int(5), s.column_int(6),
                        s.column_int(8), s.column_int(9), s.column_int(10), s.column_int(11), s.column_int(12),
                        s.column_int(13), s.column_int(14), s.column_int(15), s.column_double(7), s.column_text(1),
                        s.column_text(2)});
    }
    return rows;
}

template <typename T>
void expect_equal(const char* field, size_t call, T got, T want) {
    if (got != want) {
        std::ostringstream out;
        out << "call " << call << ": " << field << " " << got << ", want " << want;
        fail(out.str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: lt_trace_check TRACE TRUTH EXPECTED\n");
        return 2;
    }
    try {
        trace::Database db = trace::open_trace(argv[1]);
        const auto truth_by_pid = test::read_truth(argv[2]);
        const std::vector<Expected> expected = read_expected(argv[3]);
        const std::vector<Row> calls = read_calls(db);

        // The truth's kernels by correlation id (one process: the program).
        std::map<uint64_t, const test::TruthEvent*> truth_kernels;
        size_t annotated = 0;
        for (const auto& [pid, events] : truth_by_pid) {
            for (const auto& e : events) {
                if (e.type != "kernel") continue;
                truth_kernels[e.correlation] = &e;
                if (e.flops > 0) ++annotated;
            }
        }

        if (calls.size() != expected.size()) {
            fail("library_calls has " + std::to_string(calls.size()) + " rows, the program made " +
                 std::to_string(expected.size()) + " successful calls");
        }
        size_t attributed = 0;
        for (size_t i = 0; i < std::min(calls.size(), expected.size()); ++i) {
            const Row& row = calls[i];
            const Expected& want = expected[i];
            expect_equal("name", i, row.name, std::string("cublasLtMatmul"));
            expect_equal("op", i, row.op, std::string(want.batch > 1 ? "gemm_strided_batched" : "gemm"));
            expect_equal("m", i, row.m, want.m);
            expect_equal("n", i, row.n, want.n);
            expect_equal("k", i, row.k, want.k);
            expect_equal("batch", i, row.batch, want.batch);
            const double flops_wanted =
                2.0 * double(want.m) * double(want.n) * double(want.k) * double(want.batch);
            expect_equal("flops", i, row.flops, flops_wanted);
            expect_equal("a", i, static_cast<uint64_t>(row.a), want.a);
            expect_equal("b", i, static_cast<uint64_t>(row.b), want.b);
            expect_equal("c (D)", i, static_cast<uint64_t>(row.c), want.d);
            expect_equal("workspace", i, static_cast<uint64_t>(row.workspace), want.workspace);
            expect_equal("workspace_bytes", i, static_cast<uint64_t>(row.workspace_bytes), want.workspace_bytes);
            expect_equal("a_type", i, row.a_type, int64_t{want.a_type});
            expect_equal("compute_type", i, row.compute_type, int64_t{want.compute_type});
            expect_equal("transa", i, row.transa, int64_t{want.transa});

            // The kernels the trace attributes to this call, against the truth.
            trace::Statement kernels(db, "SELECT correlation, mangled FROM kernel_view WHERE library_call = ?");
            kernels.bind(1, row.id);
            double flops = 0;
            size_t count = 0;
            while (kernels.step()) {
                ++count;
                const std::string name = kernels.column_text(1);
                const auto found = truth_kernels.find(static_cast<uint64_t>(kernels.column_int(0)));
                if (found == truth_kernels.end()) {
                    fail("call " + std::to_string(i) + ": kernel " + name + " is not in the truth");
                    continue;
                }
                if (found->second->name != name) {
                    fail("call " + std::to_string(i) + ": kernel name differs from the truth");
                }
                flops += found->second->flops;
                const bool tagged = name.find(want.epilogue_tag) != std::string::npos;
                if (want.epilogue_tag != "-" ? !tagged : name.find("_epilogue_") != std::string::npos) {
                    fail("call " + std::to_string(i) + ": kernel " + name + " does not carry epilogue " +
                         want.epilogue_tag);
                }
            }
            attributed += count;
            if (count == 0) fail("call " + std::to_string(i) + ": no kernels attributed");
            if (std::fabs(flops - row.flops) > 1e-9 * row.flops) {
                fail("call " + std::to_string(i) + ": truth FLOPs of its kernels " + std::to_string(flops) +
                     ", row " + std::to_string(row.flops));
            }
        }
        if (attributed != annotated) {
            fail("the truth has " + std::to_string(annotated) + " GEMM kernels, " + std::to_string(attributed) +
                 " are attributed to cublasLtMatmul calls");
        }
        if (g_failures == 0) {
            std::printf("ok: %zu cublasLtMatmul calls match the program and the truth\n", calls.size());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lt_trace_check: %s\n", e.what());
        return 1;
    }
    return g_failures == 0 ? 0 : 1;
}
