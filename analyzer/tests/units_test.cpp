#include <doctest/doctest.h>

#include "tbdprof/analyzer/budget.h"
#include "tbdprof/analyzer/units.h"

#include "document.h"
#include "text_fit.h"

#include <tbdprof/cmdline/progress.h>

using namespace tbdprof::analyzer;

TEST_CASE("sizes") {
    CHECK(parse_bytes("12GiB").value == 12ll << 30);
    CHECK(parse_bytes("12 gib").value == 12ll << 30);
    CHECK(parse_bytes("500MB").value == 500'000'000);
    CHECK(parse_bytes("1.5GiB").value == 3ll << 29);
    CHECK(parse_bytes("1048576").value == 1048576);
    CHECK(parse_bytes("64KiB").value == 65536);
    CHECK_FALSE(parse_bytes("12GX").ok());
    CHECK(parse_bytes("12GX").error.find("unknown size unit") != std::string::npos);
    CHECK_FALSE(parse_bytes("GiB").ok());
    CHECK_FALSE(parse_bytes("-1GiB").ok());
    CHECK_FALSE(parse_bytes("1e30GiB").ok());
}

TEST_CASE("durations") {
    CHECK(parse_duration_ns("250ms").value == 250'000'000);
    CHECK(parse_duration_ns("1.5s").value == 1'500'000'000);
    CHECK(parse_duration_ns("800us").value == 800'000);
    CHECK(parse_duration_ns("100ns").value == 100);
    CHECK(parse_duration_ns("2min").value == 120'000'000'000);
    CHECK(parse_duration_ns("250").error.find("needs a unit") != std::string::npos);
    CHECK_FALSE(parse_duration_ns("fast").ok());
    CHECK_FALSE(parse_duration_ns("3 fortnights").ok());
}

TEST_CASE("fractions") {
    CHECK(parse_fraction("0.8").value == doctest::Approx(0.8));
    CHECK(parse_fraction("80%").value == doctest::Approx(0.8));
    CHECK_FALSE(parse_fraction("1.5").ok());
    CHECK_FALSE(parse_fraction("eighty").ok());
}

TEST_CASE("printing") {
    CHECK(format_bytes(1536) == "1.50 KiB");
    CHECK(format_bytes(12) == "12 B");
    CHECK(format_percent(0.875) == "87.50%");
    CHECK(format_duration_ns(12'300'000) == "12.300 ms");
}

TEST_CASE("budget limits") {
    Budget budget;
    CHECK(apply_limit(budget, "max-peak-memory", "12GiB").empty());
    CHECK(apply_limit(budget, "max-category", "activations=8GiB").empty());
    CHECK(apply_limit(budget, "max-category", "feelings=8GiB").find("unknown category") != std::string::npos);
    CHECK(apply_limit(budget, "max-category", "8GiB").find("CATEGORY=SIZE") != std::string::npos);
    CHECK(apply_limit(budget, "min-gpu-utilization", "80%").empty());
    CHECK(apply_limit(budget, "max-iteration-time", "250").find("needs a unit") != std::string::npos);
    REQUIRE(budget.max_peak_memory.has_value());
    CHECK(*budget.max_peak_memory == 12ll << 30);
    REQUIRE(budget.max_category.size() == 1);
    CHECK(budget.max_category[0].second == 8ll << 30);
    CHECK(*budget.min_gpu_utilization == doctest::Approx(0.8));
}

TEST_CASE("text fitting: elision in the middle and at the end, wrapping, tables within the width") {
    CHECK(elide_middle("abcdefghij", 10) == "abcdefghij");
    CHECK(elide_middle("abcdefghijkl", 9) == "abc...jkl");
    CHECK(display_width(elide_middle("gemm_kernel<float, 128, 64>(float const*, float*)", 20)) == 20);
    CHECK(elide_middle("ééééééééééé", 7) == "éé...éé");  // code points, not bytes
    CHECK(elide_end("inner < middle < outer", 12) == "inner < m...");
    // Demangled names lose their parameters, template arguments and scopes before anything is cut.
    const std::string adam = "tbdsample::(anonymous namespace)::adam_update(float*, float const*, long, tbdsample::AdamHyper)";
    CHECK(shorten_symbol(adam, 200) == adam);
    CHECK(shorten_symbol(adam, 50) == "tbdsample::(anonymous namespace)::adam_update(...)");
    CHECK(shorten_symbol(adam, 20) == "adam_update(...)");
    CHECK(shorten_symbol("void gpt::add_bias<float>(float*, float const*, int, int)", 30) == "void gpt::add_bias<float>(...)");
    CHECK(shorten_symbol("void gpt::add_bias<float>(float*, float const*, int, int)", 24) == "add_bias<float>(...)");
    CHECK(shorten_symbol("void cub::DeviceReduceKernel<cub::Policy<600>, float*, int>(float*, int)", 30) ==
          "DeviceReduceKernel<...>(...)");
    // Not a C++ name: cut in the middle as before; never wider than asked.
    CHECK(shorten_symbol("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8", 20) ==
          elide_middle("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8", 20));
    CHECK(shorten_symbol("read-then-updated (0.9)", 12) == elide_middle("read-then-updated (0.9)", 12));
    for (size_t w : {5, 10, 16, 25, 40}) CHECK(display_width(shorten_symbol(adam, w)) <= w);
    const auto lines = wrap_words("one two three four five six", 10);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "one two");
    CHECK(lines[1] == "  three");
    for (const std::string& line : lines) CHECK(display_width(line) <= 10);
    // An indented line keeps its indent; its continuation lines go further in.
    const auto indented = wrap_words("  rank 0: 38.56 MiB at 9.841 ms, weights 2.00 MiB", 24);
    REQUIRE(indented.size() == 3);
    CHECK(indented[0] == "  rank 0: 38.56 MiB at");
    CHECK(indented[1] == "    9.841 ms, weights");
    CHECK(indented[2] == "    2.00 MiB");
    Document document;
    document.title = "t";
    Section section{"s", {}, Table{{"name", "bytes", "stack"}, {false, true, false}, {}, {false, false, true}}, {}};
    section.table->add({std::string(50, 'n'), "12 MiB", "innermost < " + std::string(80, 's')});
    document.sections.push_back(section);
    for (size_t width : {40, 60, 100}) {
        const std::string text = to_text(document, width);
        size_t start = 0;
        while (start < text.size()) {
            const size_t end = text.find('\n', start);
            CHECK(display_width(text.substr(start, end - start)) <= width);
            start = end + 1;
        }
        CHECK(text.find("innermost") != std::string::npos);
    }
    CHECK(to_text(document, 0).find(std::string(80, 's')) != std::string::npos);  // no limit: whole
}

TEST_CASE("text tables: columns cut at their end give way widest first and keep their start") {
    Document document;
    document.title = "t";
    // A list column (largest item first) beside a call stack, both cut at their end; a name column
    // cut in the middle.
    Section section{"s", {}, Table{{"list", "name", "stack"}, {false, false, false}, {}, {true, false, true}}, {}};
    const std::string list = "untagged 24.00 MiB, activations 8.00 MiB";
    const std::string stack = "innermost < " + std::string(80, 's');
    section.table->add({list, std::string(20, 'n'), stack});
    document.sections.push_back(section);
    // 40 + 20 + 92 + 2 gaps: the stack (widest) gives way first, the list keeps its full text.
    const std::string wide = to_text(document, 120);
    CHECK(wide.find(list) != std::string::npos);
    CHECK(wide.find(std::string(20, 'n')) != std::string::npos);
    // Narrower: both end-cut columns stop at 30 columns, cut at their end, before the name is cut.
    const std::string narrow = to_text(document, 84);
    CHECK(narrow.find(elide_end(list, 30)) != std::string::npos);
    CHECK(narrow.find("untagged 24.00 MiB, activat...") != std::string::npos);
    CHECK(narrow.find(elide_end(stack, 30)) != std::string::npos);
    CHECK(narrow.find(std::string(20, 'n')) != std::string::npos);
}

TEST_CASE("progress line: text, width, silence off a terminal") {
    using tbdprof::cmdline::progress_text;
    CHECK(progress_text("tbdprof import", "parsing", 0.375, 12.34, 100) == "tbdprof import: parsing 38% (12.3 s)");
    CHECK(progress_text("tbdprof", "writing", -1, 0.5, 100) == "tbdprof: writing (0.5 s)");
    CHECK(progress_text("tbdprof", "x", 7.0, 1, 100) == "tbdprof: x 100% (1.0 s)");
    CHECK(progress_text("tbdprof", std::string(200, 's'), 0.5, 1, 60).size() == 59);
    // The tests' stderr is not a terminal: no progress, quiet or not.
    CHECK_FALSE(tbdprof::cmdline::progress_wanted(false));
    CHECK_FALSE(tbdprof::cmdline::progress_wanted(true));
}
