// Regions the program names (tagger/nvtx_regions.*): the name-prefix convention, and registered
// regions taking the place of inferred sub-ranges on a small made-up pooled model.
#include <doctest/doctest.h>

#include "nvtx_regions.h"
#include "pool_tagging.h"
#include "timed_work.h"

#include <algorithm>

using namespace tbdprof::tagger;

TEST_CASE("a category name, alone or before ':' or '/', announces the category") {
    CHECK(category_of_region_name("weights") == "weights");
    CHECK(category_of_region_name("weights:layer1.W") == "weights");
    CHECK(category_of_region_name("weights/layer1/W") == "weights");
    CHECK(category_of_region_name("gradients:fc0.b") == "gradients");
    CHECK(category_of_region_name("optimizer_state:fc0.W.exp_avg") == "optimizer_state");
    CHECK(category_of_region_name("activations/block3/attn") == "activations");
    CHECK(category_of_region_name("workspace:") == "workspace");
    CHECK(category_of_region_name("input:batch") == "input");
    CHECK(category_of_region_name("other:rng_state") == "other");
}

TEST_CASE("anything else announces nothing") {
    CHECK_FALSE(category_of_region_name(""));
    CHECK_FALSE(category_of_region_name("weightsX"));
    CHECK_FALSE(category_of_region_name("weights.fc0"));  // '.' is not a separator: "weights.fc0" may be a plain name
    CHECK_FALSE(category_of_region_name("Weights:fc0"));  // exactly the stored, lower-case name
    CHECK_FALSE(category_of_region_name("optimizer:fc0"));
    CHECK_FALSE(category_of_region_name("optimizer-state:fc0"));
    CHECK_FALSE(category_of_region_name(" weights:fc0"));
    CHECK_FALSE(category_of_region_name("fc0.weights"));
    CHECK_FALSE(category_of_region_name("untagged:x"));  // not a stored category
}

namespace {

constexpr uint64_t kBase = 0x7f0000000000;

// One 1 MiB segment (allocation 0) and kernels pointing into it on a simple clock.
struct Pool {
    TraceModel model;
    int64_t now = 1000;

    Pool() {
        model.pooled = true;
        model.has_argument_info = true;
        Allocation segment;
        segment.id = 1;
        segment.address = kBase;
        segment.bytes = 1 << 20;
        segment.alloc_ns = now++;
        model.allocations.push_back(segment);
    }
    size_t kernel(std::vector<std::pair<uint64_t, Access>> uses) {
        WorkItem w = tbdprof::tagger::test::timed_work(WorkItem::Kind::Kernel, 1, now);
        w.touches.push_back({0, uses.front().second});
        auto index = static_cast<uint32_t>(model.work.size());
        for (auto [offset, access] : uses) model.pointer_uses.push_back({index, 0, offset, 0, false, access});
        model.work.push_back(std::move(w));
        return index;
    }
    void region(uint64_t offset, int64_t bytes, int64_t begin_ns, std::optional<int64_t> end_ns, std::string name) {
        model.regions.push_back({0, offset, bytes, begin_ns, end_ns, std::move(name)});
    }
};

}  // namespace

TEST_CASE("regions replace inferred sub-ranges; uses go to the region registered at the time") {
    Pool p;
    const int64_t swap = 1000 + 20 * 3;  // the fourth kernel is enqueued at 1060
    p.region(0, 4096, 0, std::nullopt, "weights:w");
    p.region(8192, 4096, 0, swap, "tmp");
    p.region(8192, 2048, swap, std::nullopt, "gradients:g");
    for (int i = 0; i < 6; ++i) p.kernel({{0, Access::Read}, {8192, Access::Write}, {100, Access::Read}});
    p.kernel({{65536, Access::Write}});  // in no region: an inferred sub-range stays
    std::sort(p.model.regions.begin(), p.model.regions.end(),
              [](const RegisteredRegion& a, const RegisteredRegion& b) { return a.offset < b.offset; });

    std::vector<int32_t> region_of;
    IterationSet its;
    SubRangeSet set = derive_with_regions(p.model, its, region_of);
    REQUIRE(region_of.size() == set.ranges.size());
    REQUIRE(set.ranges.size() == 4);
    // Sorted by offset, then first use: the weights region (uses at 0 and 100), tmp, g, the inferred one.
    CHECK(region_of[0] == 0);
    CHECK(set.ranges[0].bytes == 4096);
    CHECK(set.ranges[0].first_work == 0);
    CHECK(set.ranges[0].last_work == 5);
    CHECK(p.model.regions[size_t(region_of[1])].name == "tmp");
    CHECK(set.ranges[1].last_work == 2);
    CHECK(p.model.regions[size_t(region_of[2])].name == "gradients:g");
    CHECK(set.ranges[2].first_work == 3);
    CHECK(set.ranges[2].bytes == 2048);
    CHECK(region_of[3] == kNone);
    CHECK(set.ranges[3].offset == 65536);
    // Every use has its owner: the pointer at 100 is inside the weights region.
    for (size_t u = 0; u < p.model.pointer_uses.size(); ++u) CHECK(set.owner[u] != kNone);
    CHECK(set.owner[2] == 0);
}

TEST_CASE("tagging: a category in the name decides, with its own rule; the rules tag the rest") {
    Pool p;
    p.region(0, 4096, 0, std::nullopt, "gradients:not_what_the_rules_say");
    p.region(8192, 4096, 0, 1100, "scratch");
    for (int i = 0; i < 5; ++i) p.kernel({{0, Access::Read}, {8192, Access::Write}});
    IterationSet its;
    TagResult r = tag_model(p.model, "", its);
    REQUIRE(r.subranges.size() == 2);
    CHECK(r.subranges[0].tag.category == "gradients");
    CHECK(r.subranges[0].tag.rule == kRegionNameRule);
    CHECK(r.subranges[0].tag.confidence == doctest::Approx(1.0));
    CHECK(r.subranges[0].tag.reason.find("not_what_the_rules_say") != std::string::npos);
    CHECK(r.subranges[1].tag.rule != kRegionNameRule);
    CHECK(r.subranges[1].tag.evidence.find("NVTX region \"scratch\"") != std::string::npos);
    // A region lives from its registration to its unregistration.
    CHECK(r.subranges[0].begin_ns == 0);
    CHECK(r.subranges[1].begin_ns == 0);
    CHECK(r.subranges[1].end_ns == 1100);
    CHECK(r.registered_regions == 2);
    CHECK(r.named_regions == 1);
}

TEST_CASE("without regions nothing changes") {
    Pool p;
    for (int i = 0; i < 20; ++i) p.kernel({{uint64_t(i) * 4096, Access::Write}});
    IterationSet its;
    std::vector<int32_t> region_of;
    SubRangeSet with = derive_with_regions(p.model, its, region_of);
    SubRangeSet without = derive_subranges(p.model, its);
    REQUIRE(with.ranges.size() == without.ranges.size());
    for (size_t i = 0; i < with.ranges.size(); ++i) {
        CHECK(with.ranges[i].offset == without.ranges[i].offset);
        CHECK(with.ranges[i].bytes == without.ranges[i].bytes);
        CHECK(region_of[i] == kNone);
    }
    CHECK(with.owner == without.owner);
}

TEST_CASE("nested regions: the smallest covering one; a region ends before work enqueued at its end") {
    Pool p;
    p.region(0, 65536, 0, std::nullopt, "weights:all");        // an arena-wide region
    p.region(4096, 1024, 0, std::nullopt, "gradients:inner");  // nested inside it
    p.region(8192, 1024, 0, 1001, "activations:gone");         // ends when the first kernel is enqueued
    std::sort(p.model.regions.begin(), p.model.regions.end(),
              [](const RegisteredRegion& a, const RegisteredRegion& b) { return a.offset < b.offset; });
    for (int i = 0; i < 3; ++i) p.kernel({{4096 + 8, Access::Write}, {8192, Access::Read}, {100, Access::Read}});
    std::vector<int32_t> region_of;
    IterationSet its;
    SubRangeSet set = derive_with_regions(p.model, its, region_of);
    auto name_of_use = [&](size_t u) {
        const int32_t owner = set.owner[u];
        if (owner == kNone || region_of[size_t(owner)] == kNone) return std::string("inferred");
        return p.model.regions[size_t(region_of[size_t(owner)])].name;
    };
    CHECK(name_of_use(0) == "gradients:inner");
    CHECK(name_of_use(1) == "weights:all");  // "activations:gone" ended at 1001: the enclosing region
    CHECK(name_of_use(2) == "weights:all");
}

TEST_CASE("many regions reused at the same offsets over many steps stay cheap") {
    Pool p;
    constexpr int kSteps = 400, kTensors = 50;
    for (int step = 0; step < kSteps; ++step) {
        const int64_t begin = p.now;
        for (int t = 0; t < kTensors; ++t) p.kernel({{uint64_t(t) * 1024, Access::Write}});
        for (int t = 0; t < kTensors; ++t)
            p.region(uint64_t(t) * 1024, 1024, begin, p.now, "activations:t" + std::to_string(t));
    }
    std::sort(p.model.regions.begin(), p.model.regions.end(), [](const RegisteredRegion& a, const RegisteredRegion& b) {
        return std::tie(a.offset, a.begin_ns) < std::tie(b.offset, b.begin_ns);
    });
    std::vector<int32_t> region_of;
    IterationSet its;
    SubRangeSet set = derive_with_regions(p.model, its, region_of);
    CHECK(set.ranges.size() == size_t(kSteps * kTensors));
    for (int32_t r : region_of) CHECK(r != kNone);
}
