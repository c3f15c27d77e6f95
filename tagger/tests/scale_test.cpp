// Tagging at the scale of a large import: a million named ranges and a quarter of a million steps
// (a multi-GB Kineto trace, where torch.profiler marks every operator with a range). The phase
// search, the lifetime facts and the optimizer-range lookup once compared every range or step with
// every step or allocation: each of those loops alone here is over 10^11 comparisons, minutes even at
// a nanosecond each, so ctest's TIMEOUT (tagger/tests/CMakeLists.txt) fails the test if any of them
// comes back. Sorted once and searched, the whole run takes about a second (a few under sanitizers or
// on a loaded machine), far from that limit either way. The results are checked too.
#include <doctest/doctest.h>

#include "iterations.h"
#include "rules.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace tbdprof::tagger;

namespace {

constexpr size_t kSteps = 250000;
constexpr int64_t kStepNs = 1000;

int64_t step_begin_ns(size_t i) {
    return static_cast<int64_t>(i) * kStepNs;
}

// Each step: an operator range, then forward, backward and optimizer ranges named as PyTorch names
// them. Allocated in each step but the last, never freed (so alive over later steps): one inside the
// optimizer range, one inside backward; every tenth step also a buffer freed at once.
struct LargeImport {
    TraceModel model;
    IterationSet its;
    std::map<std::string, size_t> expected;  // category -> allocations

    LargeImport() {
        model.ranges.reserve(4 * kSteps);
        for (size_t i = 0; i < kSteps; ++i) {
            const int64_t b = step_begin_ns(i);
            its.iterations.push_back({.process = 0, .begin_ns = b, .end_ns = b + kStepNs, .core_begin_ns = b + 10});
            model.ranges.push_back({0, b + 110, b + 120, "aten::addmm"});
            model.ranges.push_back({0, b + 100, b + 300, "## forward ##"});
            model.ranges.push_back({0, b + 300, b + 600, "## backward ##"});
            model.ranges.push_back({0, b + 600, b + 900, "Optimizer.step#SGD.step"});
            if (i + 1 == kSteps) continue;
            allocate(b + 650, std::nullopt, "optimizer_state");
            allocate(b + 400, std::nullopt, "gradients");
            if (i % 10 == 0) allocate(b + 200, b + 205, "workspace");
        }
        its.source = "nvtx";
    }

    void allocate(int64_t alloc_ns, std::optional<int64_t> free_ns, const std::string& category) {
        Allocation a;
        a.id = static_cast<int64_t>(model.allocations.size()) + 1;
        a.address = 0x100000 * static_cast<uint64_t>(a.id);
        a.bytes = 4096;
        a.alloc_ns = alloc_ns;
        a.free_ns = free_ns;
        model.allocations.push_back(a);
        ++expected[category];
    }
};

}  // namespace

TEST_CASE("a large import with a step per few ranges is tagged in about linear time, with its phases") {
    const LargeImport run;
    const TagResult result = tag_allocations(run.model, run.its);

    std::map<std::string, size_t> tagged;
    for (const Tag& tag : result.tags) ++tagged[tag.category];
    CHECK_EQ(tagged, run.expected);

    REQUIRE_EQ(result.phases.size(), 3 * kSteps);
    for (size_t i = 0; i < kSteps; i += kSteps / 7) {
        const int64_t b = step_begin_ns(i);
        const Phase* phase = &result.phases[3 * i];
        CHECK_EQ(phase[0].iteration, i);
        CHECK_EQ(phase[0].kind, "forward");
        CHECK_EQ(phase[0].begin_ns, b + 100);
        CHECK_EQ(phase[0].end_ns, b + 300);
        CHECK_EQ(phase[1].kind, "backward");
        CHECK_EQ(phase[1].begin_ns, b + 300);
        CHECK_EQ(phase[2].kind, "optimizer");
        CHECK_EQ(phase[2].end_ns, b + 900);
    }
}

namespace {

// The phases named ranges give, as the tagger computed them before it sorted anything: every range
// against every iteration (the reference the sweep must match).
std::vector<Phase> phases_by_scanning(const TraceModel& m, const IterationSet& its) {
    const char* kinds[] = {"forward", "backward", "optimizer"};
    std::vector<Phase> phases;
    for (size_t i = 0; i < its.iterations.size(); ++i) {
        const Iteration& it = its.iterations[i];
        int64_t begin[3] = {-1, -1, -1}, end[3] = {-1, -1, -1};
        for (const Range& r : m.ranges) {
            if (r.process != it.process || r.begin_ns < it.begin_ns || r.end_ns > it.end_ns) continue;
            std::string name = r.name;
            for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            for (int k = 0; k < 3; ++k) {
                if (name.find(kinds[k]) == std::string::npos) continue;
                if (begin[k] < 0 || r.begin_ns < begin[k]) begin[k] = r.begin_ns;
                end[k] = std::max(end[k], r.end_ns);
                break;
            }
        }
        if (begin[0] < 0 || begin[1] < 0 || begin[2] < 0) continue;
        for (int k = 0; k < 3; ++k) phases.push_back({i, kinds[k], begin[k], end[k]});
    }
    return phases;
}

}  // namespace

TEST_CASE("phases from named ranges are those of a scan of every range, whatever the layout") {
    // Small random runs: two processes, iterations that may overlap or come out of order, ranges that
    // nest, straddle a boundary, share a begin, or end before they begin (a malformed row).
    std::mt19937 random(23);
    const char* names[] = {"## forward ##", "Backward pass", "Optimizer.step#Adam.step", "aten::mm",
                           "forward_backward"};
    for (int run = 0; run < 200; ++run) {
        TraceModel model;
        IterationSet its;
        auto time = [&] { return static_cast<int64_t>(random() % 2000); };
        for (int i = 0, n = 1 + static_cast<int>(random() % 12); i < n; ++i) {
            const int64_t b = time(), length = static_cast<int64_t>(random() % 400);
            its.iterations.push_back(
                {.process = static_cast<int32_t>(random() % 2), .begin_ns = b, .end_ns = b + length});
        }
        for (int r = 0, n = static_cast<int>(random() % 80); r < n; ++r) {
            const int64_t b = time(), e = random() % 10 == 0 ? b - 5 : b + static_cast<int64_t>(random() % 150);
            model.ranges.push_back({static_cast<int32_t>(random() % 2), b, e, names[random() % 5]});
        }
        const TagResult result = tag_allocations(model, its);
        const std::vector<Phase> expected = phases_by_scanning(model, its);
        REQUIRE_EQ(result.phases.size(), expected.size());
        for (size_t p = 0; p < expected.size(); ++p) {
            CHECK_EQ(result.phases[p].iteration, expected[p].iteration);
            CHECK_EQ(result.phases[p].kind, expected[p].kind);
            CHECK_EQ(result.phases[p].begin_ns, expected[p].begin_ns);
            CHECK_EQ(result.phases[p].end_ns, expected[p].end_ns);
        }
    }
}
