// Memory: exact peak, split by category at the peak, each category's own maximum, live set at peak.
#include <doctest/doctest.h>

#include "tbdprof/analyzer/analyze.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {
int cat(const char* name) { return category_index(name); }
}  // namespace

TEST_CASE("peak live device bytes, categories at the peak and their own maxima") {
    tbdtest::TraceBuilder t("memory_peak.sqlite");
    t.allocation(100, 0, 50, "weights");
    t.allocation(200, 10, 100, "activations");
    t.allocation(50, 60, 80);                                 // untagged
    t.allocation(1000, 5, 20, "", "pinned_host");             // host memory: not counted
    t.allocation(300, 150, std::nullopt, "activations");      // alone: activations' own maximum
    const Report r = analyze_trace(t.finish(1000), AnalysisOptions{});
    const MemoryMetrics& m = r.memory;
    CHECK(m.allocations == 4);
    CHECK(m.peak_bytes == 300);
    CHECK(m.peak_ns == 10);
    CHECK(m.at_peak[cat("weights")] == 100);
    CHECK(m.at_peak[cat("activations")] == 200);
    CHECK(m.at_peak[kUntagged] == 0);
    CHECK(m.category_max[cat("activations")] == 300);
    CHECK(m.category_max[kUntagged] == 50);
    CHECK(m.tagged);
    REQUIRE(m.largest_at_peak.size() == 2);
    CHECK(m.largest_at_peak[0].bytes == 200);
    CHECK(m.largest_at_peak[0].category == cat("activations"));
    CHECK(m.largest_at_peak[1].bytes == 100);
    REQUIRE(!m.timeline.empty());
}

TEST_CASE("a free and an allocation at the same time do not overlap") {
    tbdtest::TraceBuilder t("memory_same_time.sqlite");
    t.allocation(100, 0, 10, "workspace");
    t.allocation(100, 10, 20, "workspace");
    t.allocation(70, 30, 30, "workspace");  // zero lifetime still counts at its moment
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    CHECK(r.memory.peak_bytes == 100);
}

TEST_CASE("untagged allocations are reported as such") {
    tbdtest::TraceBuilder t("memory_untagged.sqlite");
    t.allocation(4096, 0, std::nullopt);
    t.allocation(1024, 1, std::nullopt, "", "device_async", 1);
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    CHECK(r.memory.peak_bytes == 5120);
    CHECK(r.memory.at_peak[kUntagged] == 5120);
    CHECK_FALSE(r.memory.tagged);
    REQUIRE(r.memory.device_peaks.size() == 2);
    CHECK(r.memory.device_peaks[0].second == 4096);
}

TEST_CASE("call stacks of the largest allocations") {
    tbdtest::TraceBuilder t("memory_stacks.sqlite");
    t.exec("INSERT INTO strings (id, text) VALUES (50, 'allocate_weights'), (51, 'main'), (52, '/opt/app/train')");
    t.exec("INSERT INTO stacks (id, process, depth) VALUES (7, 1, 2)");
    t.exec("INSERT INTO frames (id, process, ip, symbol, module, offset) VALUES (1, 1, 4096, 50, 52, 16), "
           "(2, 1, 8192, 51, 52, 32)");
    t.exec("INSERT INTO stack_frames (stack, position, frame) VALUES (7, 0, 1), (7, 1, 2)");
    t.allocation(1 << 20, 0, std::nullopt, "weights", "device", 0, 7);
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    REQUIRE(r.memory.largest_at_peak.size() == 1);
    const auto& stack = r.memory.largest_at_peak[0].stack;
    REQUIRE(stack.size() == 2);
    CHECK(stack[0] == "allocate_weights (train)");
    CHECK(stack[1] == "main (train)");
}

TEST_CASE("pooled segments count by their tagged sub-ranges; the rest is unattributed pool space") {
    tbdtest::TraceBuilder t("memory_subranges.sqlite");
    const int64_t segment = t.allocation(1000, 0, std::nullopt, "activations");
    t.allocation(500, 20, 30, "gradients");
    t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES "
           "(1, " + std::to_string(segment) + ", 0, 300, 0, 100, 'weights'), "
           "(2, " + std::to_string(segment) + ", 300, 200, 10, 50, 'activations'), "
           "(3, " + std::to_string(segment) + ", 0, 5000, 0, 100, 'gradients'), "  // larger than its segment: ignored
           "(4, 999, 0, 10, 0, 100, 'gradients')");                                // no such segment: ignored
    t.exec("INSERT INTO run_notes (key, value) VALUES ('memory_breakdown', 'sub-range level (inferred)')");
    const Report r = analyze_trace(t.finish(200), AnalysisOptions{});
    const MemoryMetrics& m = r.memory;
    CHECK(m.peak_bytes == 1500);  // the segment is live all its life, whatever its tensors do
    CHECK(m.peak_ns == 20);
    CHECK(m.at_peak[cat("weights")] == 300);
    CHECK(m.at_peak[cat("activations")] == 200);
    CHECK(m.at_peak[cat("gradients")] == 500);
    CHECK(m.at_peak[kUntagged] == 500);
    CHECK(m.category_max[kUntagged] == 1000);  // before the first sub-range begins and after the last ends
    REQUIRE(m.largest_at_peak.size() == 2);
    CHECK(m.largest_at_peak[0].bytes == 1000);  // the segment, listed with its own category
    CHECK(m.largest_at_peak[0].category == cat("activations"));
    bool noted = false;
    for (const std::string& note : r.notes) noted |= note.find("sub-range level") != std::string::npos;
    CHECK(noted);
}
