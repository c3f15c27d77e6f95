// Tagging at the scale of a large import: a million named ranges and a quarter of a million steps
// (a multi-GB Kineto trace, where torch.profiler marks every operator with a range). The phase
// search, the lifetime facts and the optimizer-range lookup once compared every range or step with
// every step or allocation: each of those loops alone here is over 10^11 comparisons, minutes even at
// a nanosecond each, so ctest's TIMEOUT (tagger/tests/CMakeLists.txt) fails the test if any of them
// comes back. Sorted once and searched, the whole run takes about a second (a few under sanitizers or
// on a loaded machine), far from that limit either way. The results are checked too.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "iterations.h"
#include "rules.h"

#include <map>
#include <string>

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
