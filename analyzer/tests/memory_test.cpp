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
    CHECK(m.peak_trace_ns == 10);
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
    CHECK(m.peak_trace_ns == 20);
    CHECK(m.at_peak[cat("weights")] == 300);
    CHECK(m.at_peak[cat("activations")] == 200);
    CHECK(m.at_peak[cat("gradients")] == 500);
    CHECK(m.at_peak[kUntagged] == 500);
    CHECK(m.category_max[kUntagged] == 1000);  // before the first sub-range begins and after the last ends
    REQUIRE(m.largest_at_peak.size() == 2);
    CHECK(m.largest_at_peak[0].bytes == 1000);  // the segment, listed with what it holds at the peak
    CHECK(m.largest_at_peak[0].by_subrange);
    CHECK(m.largest_at_peak[0].category == kUntagged);  // 500 unattributed bytes are its largest share
    REQUIRE(m.largest_at_peak[0].at_peak.size() == 3);
    CHECK(m.largest_at_peak[0].at_peak[1] == std::pair<int, int64_t>{cat("weights"), 300});
    CHECK(m.largest_at_peak[0].at_peak[2] == std::pair<int, int64_t>{cat("activations"), 200});
    bool noted = false;
    for (const std::string& note : r.notes) noted |= note.find("sub-range level") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("regions the program registered are counted in the notes, with those tagged by their name") {
    tbdtest::TraceBuilder t("memory_regions.sqlite");
    const std::string segment = std::to_string(t.allocation(1000, 0, std::nullopt, "weights"));
    t.exec("INSERT INTO memory_regions (id, process, address, bytes, allocation, register_ns) VALUES "
           "(1, 1, 0, 300, " + segment + ", 0), (2, 1, 300, 200, " + segment + ", 10), (3, 1, 99999, 8, NULL, 0)");
    t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category, rule) VALUES "
           "(1, " + segment + ", 0, 300, 0, 100, 'weights', 'nvtx-region-name'), "
           "(2, " + segment + ", 300, 200, 10, 50, 'activations', 'produced-consumed-in-step')");
    const Report r = analyze_trace(t.finish(200), AnalysisOptions{});
    bool noted = false;
    for (const std::string& note : r.notes)
        noted |= note.find("the program registered 2 regions (tensors) inside allocations") != std::string::npos &&
                 note.find("1 tensors tagged by the category their region's name begins with") != std::string::npos;
    CHECK(noted);
    CHECK(r.memory.at_peak[cat("weights")] == 300);
}

TEST_CASE("sub-ranges sharing bytes at the same time count once: the narrowest, then the latest, wins") {
    tbdtest::TraceBuilder t("memory_overlap.sqlite");
    const std::string segment = std::to_string(t.allocation(1000, 0, 200, "workspace"));
    t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES "
           "(1, " + segment + ", 0, 1000, 0, 100, 'workspace'), "   // an extent over everything
           "(2, " + segment + ", 100, 200, 10, 50, 'weights'), "    // a tensor inside it
           "(3, " + segment + ", 100, 200, 20, 60, 'activations'), "  // the same bytes, began later
           "(4, " + segment + ", 900, 200, 30, 40, 'gradients')");  // past the end: clipped to 100 bytes
    const Report r = analyze_trace(t.finish(200), AnalysisOptions{});
    const MemoryMetrics& m = r.memory;
    CHECK(m.peak_bytes == 1000);
    int64_t sum = 0;
    for (int64_t bytes : m.at_peak) sum += bytes;
    CHECK(sum == 1000);
    for (int c = 0; c < kCategoryCount; ++c) CHECK(m.category_max[c] <= m.peak_bytes);
    CHECK(m.category_max[cat("workspace")] == 1000);
    CHECK(m.category_max[cat("weights")] == 200);      // 10..20, then the later tensor takes the bytes
    CHECK(m.category_max[cat("activations")] == 200);
    CHECK(m.category_max[cat("gradients")] == 100);
    CHECK(m.category_max[kUntagged] == 1000);          // 100..200: no tensor in use
    for (const MemoryPoint& p : m.timeline) {
        int64_t total = 0;
        for (int64_t bytes : p.bytes) {
            CHECK(bytes >= 0);
            total += bytes;
        }
        CHECK(total <= 1000);
    }
    bool noted = false;
    for (const std::string& note : r.notes) noted |= note.find("overlap in place and time") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("a segment live at the peak before its tensors are used is listed as unattributed, as the breakdown says") {
    tbdtest::TraceBuilder t("memory_peak_moment.sqlite");
    t.allocation(100, 0, 300, "weights");
    const std::string segment = std::to_string(t.allocation(400, 50, 300, "gradients"));
    t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES "
           "(1, " + segment + ", 0, 300, 80, 120, 'gradients'), (2, " + segment + ", 300, 100, 90, 110, 'optimizer_state')");
    const Report r = analyze_trace(t.finish(300), AnalysisOptions{});
    const MemoryMetrics& m = r.memory;
    CHECK(m.peak_bytes == 500);
    CHECK(m.peak_trace_ns == 50);  // the first moment the peak is reached: the segment's allocation
    CHECK(m.at_peak[cat("gradients")] == 0);
    CHECK(m.at_peak[kUntagged] == 400);
    CHECK(m.category_max[cat("gradients")] == 300);
    CHECK(m.category_max[cat("optimizer_state")] == 100);
    REQUIRE(m.largest_at_peak.size() == 2);
    CHECK(m.largest_at_peak[0].category == kUntagged);  // not its dominant tag, which the breakdown lacks
    CHECK(m.largest_at_peak[0].rule.empty());
    REQUIRE(m.largest_at_peak[0].at_peak.size() == 1);
    CHECK(m.largest_at_peak[0].at_peak[0] == std::pair<int, int64_t>{kUntagged, 400});
    bool pool_words = false;
    for (const std::string& note : r.notes) pool_words |= note.find("cached free") != std::string::npos;
    CHECK_FALSE(pool_words);  // nothing says this is a caching allocator
}

TEST_CASE("the largest allocations carry the tag's rule and confidence") {
    tbdtest::TraceBuilder t("memory_rule.sqlite");
    const int64_t id = t.allocation(4096, 0, std::nullopt, "weights");
    t.exec("UPDATE allocation_categories SET rule = 'updated-in-place', confidence = 0.9 WHERE allocation = " +
           std::to_string(id));
    t.allocation(1024, 0, std::nullopt);
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    REQUIRE(r.memory.largest_at_peak.size() == 2);
    CHECK(r.memory.largest_at_peak[0].rule == "updated-in-place");
    REQUIRE(r.memory.largest_at_peak[0].confidence);
    CHECK(*r.memory.largest_at_peak[0].confidence == doctest::Approx(0.9));
    CHECK(r.memory.largest_at_peak[1].rule.empty());
    CHECK_FALSE(r.memory.largest_at_peak[1].confidence);
}

TEST_CASE("extents guessed over the same bytes never lift a category above the peak") {
    // The tagger can give several sub-ranges of one category over the same bytes at the same time
    // (one extent per first use, each to the end of the segment). Counted each, five of them made
    // workspace's own maximum five times the segment.
    tbdtest::TraceBuilder t("memory_stacked_extents.sqlite");
    const std::string segment = std::to_string(t.allocation(1000, 0, 200));
    for (int i = 1; i <= 5; ++i) {
        t.exec("INSERT INTO allocation_subranges (id, allocation, offset, bytes, begin_ns, end_ns, category) VALUES (" +
               std::to_string(i) + ", " + segment + ", " + std::to_string(i * 10) + ", " + std::to_string(1000 - i * 10) +
               ", " + std::to_string(i) + ", 100, 'workspace')");
    }
    const Report r = analyze_trace(t.finish(200), AnalysisOptions{});
    CHECK(r.memory.peak_bytes == 1000);
    CHECK(r.memory.category_max[cat("workspace")] == 990);  // bytes 10..1000, each counted once
    CHECK(r.memory.category_max[kUntagged] == 1000);
    for (int64_t bytes : r.memory.at_peak) CHECK(bytes >= 0);
}

TEST_CASE("each process's own peak when several processes allocate (the ranks of one recording)") {
    // Two ranks, each holding its parameters (100 bytes) throughout and its activations at another
    // time: the trace's peak (500 bytes) counts both ranks' weights; each rank's own peak its own.
    tbdtest::TraceBuilder t("memory_processes.sqlite");
    t.exec("INSERT INTO processes (id, pid, command_line, start_ns, truncated) VALUES (2, 101, 'train', 0, 0)");
    t.allocation(100, 0, 100, "weights");
    t.allocation(200, 10, 20, "activations");
    const int64_t weights2 = t.allocation(100, 0, 100, "weights");
    const int64_t activations2 = t.allocation(300, 30, 40, "activations");
    t.exec("UPDATE allocations SET process = 2 WHERE id IN (" + std::to_string(weights2) + ", " +
           std::to_string(activations2) + ")");
    // Only the second process has a recorded rank: the first's is unknown, not 0.
    t.exec("INSERT INTO process_ranks (process, rank, local_rank, world_size) VALUES (2, 1, 1, 2)");
    const Report r = analyze_trace(t.finish(1000), AnalysisOptions{});
    const MemoryMetrics& m = r.memory;
    CHECK(m.peak_bytes == 500);
    CHECK(m.at_peak[cat("weights")] == 200);
    REQUIRE(m.processes.size() == 2);
    CHECK(m.processes[0].process == 1);
    CHECK(m.processes[0].peak_bytes == 300);
    CHECK(m.processes[0].peak_trace_ns == 10);
    CHECK(m.processes[0].at_peak[cat("weights")] == 100);
    CHECK(m.processes[0].at_peak[cat("activations")] == 200);
    CHECK_FALSE(m.processes[0].rank.has_value());
    CHECK(m.processes[1].process == 2);
    CHECK(m.processes[1].rank == std::optional<int64_t>(1));
    CHECK(m.processes[1].peak_bytes == 400);
    CHECK(m.processes[1].peak_trace_ns == 30);
    CHECK(m.processes[1].at_peak[cat("weights")] == 100);
    CHECK(m.processes[1].at_peak[cat("activations")] == 300);
}

TEST_CASE("one process: no per-process peaks, the trace's are its own") {
    tbdtest::TraceBuilder t("memory_one_process.sqlite");
    t.allocation(100, 0, 100, "weights");
    const Report r = analyze_trace(t.finish(1000), AnalysisOptions{});
    CHECK(r.memory.peak_bytes == 100);
    CHECK(r.memory.processes.empty());
}
