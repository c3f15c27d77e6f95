// The communication figures by the sweep (one stretch per union and rank held) against the same
// figures from the whole unions, on random small layouts of two ranks with communication overlapping
// computation, a device with computation only, zero-length kernels, and windows and iterations that
// cut through kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "communication.h"
#include "trace_builder.h"
#include "trace_file.h"

using namespace tbdprof::analyzer;

namespace {

void check_same(const CommunicationFigures& a, const CommunicationFigures& b) {
    CHECK(a.communication_ns == b.communication_ns);
    CHECK(a.computation_ns == b.computation_ns);
    CHECK(a.overlapped_ns == b.overlapped_ns);
    CHECK(a.exposed_ns == b.exposed_ns);
    CHECK(a.idle_ns == b.idle_ns);
    CHECK(a.kernels == b.kernels);
}

// Kernels in start order per device: devices 0 and 1 are ranks (computation on one stream,
// collectives on another, overlapping it), device 2 computes only.
std::string random_layout(int layout, std::mt19937_64& random) {
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(random); };
    tbdtest::TraceBuilder t("communication_sweep_" + std::to_string(layout) + ".sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    t.device(1, 1e12);
    t.device(2, 1e12);
    int64_t last_start[3] = {0, 0, 0};
    const int kernels = static_cast<int>(uniform(5, 120));
    for (int i = 0; i < kernels; ++i) {
        const int64_t device = uniform(0, 2);
        const int64_t start = last_start[device] + uniform(0, 60);
        last_start[device] = start;
        const bool comm = device < 2 && uniform(0, 3) == 0;
        const int64_t duration = uniform(0, 9) == 0 ? 0 : comm ? uniform(20, 300) : uniform(1, 90);
        t.kernel(start, duration, comm ? 4 : 1 + uniform(0, 2), device);
    }
    return t.finish(std::max({last_start[0], last_start[1], last_start[2]}) + 400);
}

}  // namespace

TEST_CASE("communication figures by a sweep equal those of the whole unions, on random layouts") {
    std::mt19937_64 random(2026);
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(random); };
    int ranks_compared = 0, overlapped = 0;
    for (int layout = 0; layout < 60; ++layout) {
        CAPTURE(layout);
        const std::string path = random_layout(layout, random);
        read_trace(path, [&](const TraceFile& trace) {
            const std::vector<bool> is_comm = communication_functions(trace);
            REQUIRE_FALSE(is_comm.empty());
            for (int cut = 0; cut < 4; ++cut) {
                CAPTURE(cut);
                Window window;
                window.begin_ns = cut == 0 ? 0 : uniform(0, 1500);
                window.end_ns = window.begin_ns + (cut == 0 ? 100000 : uniform(1, 2500));
                // Sorted, disjoint spans inside the window, some touching.
                Spans spans;
                for (int64_t at = window.begin_ns; at < window.end_ns && spans.size() < 6;) {
                    const int64_t begin = at + uniform(0, 1) * uniform(0, 200);
                    const int64_t end = std::min(window.end_ns, begin + uniform(1, 600));
                    if (begin < end) spans.emplace_back(begin, end);
                    at = end;
                }
                std::vector<RankKernels> swept;
                std::vector<RankFigures> figures;
                REQUIRE(sweep_rank_kernels(trace, is_comm, window, spans, swept, figures));
                const std::vector<RankKernels> whole = read_rank_kernels(trace, is_comm, window);
                REQUIRE(swept.size() == whole.size());
                REQUIRE(figures.size() == whole.size());
                for (size_t r = 0; r < whole.size(); ++r) {
                    CAPTURE(r);
                    CHECK(swept[r].process == whole[r].process);
                    CHECK(swept[r].device == whole[r].device);
                    CHECK(swept[r].collectives.size() == whole[r].collectives.size());
                    const RankFigures expected = rank_figures(whole[r], window, spans);
                    CHECK(figures[r].communicates == expected.communicates);
                    check_same(figures[r].window, expected.window);
                    REQUIRE(figures[r].iterations.size() == spans.size());
                    for (size_t i = 0; i < spans.size(); ++i)
                        check_same(figures[r].iterations[i], expected.iterations[i]);
                    ++ranks_compared;
                    if (expected.window.overlapped_ns > 0) ++overlapped;
                }
            }
        });
    }
    // The layouts did exercise what the sweep derives: overlap of communication and computation.
    CHECK(ranks_compared > 300);
    CHECK(overlapped > 50);
}

TEST_CASE("kernels of a rank out of start order: the sweep declines, the unions sort") {
    tbdtest::TraceBuilder t("communication_sweep_unordered.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL')");
    t.exec("INSERT INTO functions (id, name, mangled) VALUES (4, 4, 4)");
    t.kernel(500, 100, 1);
    t.kernel(100, 300, 4);  // starts before the kernel stored ahead of it
    const std::string path = t.finish(1000);
    read_trace(path, [&](const TraceFile& trace) {
        Window window;
        window.end_ns = 1000;
        std::vector<RankKernels> swept;
        std::vector<RankFigures> figures;
        CHECK_FALSE(sweep_rank_kernels(trace, communication_functions(trace), window, {}, swept, figures));
        CHECK(swept.empty());
    });
    AnalysisOptions options;
    options.window = WindowChoice::all;
    const Report r = analyze_trace(path, options);
    REQUIRE(r.communication.ranks.size() == 1);
    CHECK(r.communication.ranks[0].figures.communication_ns == 300);
    CHECK(r.communication.ranks[0].figures.computation_ns == 100);
    CHECK(r.communication.ranks[0].figures.overlapped_ns == 0);
}
