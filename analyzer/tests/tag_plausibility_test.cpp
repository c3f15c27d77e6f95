// Plausibility of the memory tags (tbdprof/analyzer/tag_plausibility.h): the rules on made-up
// figures, then through analyze_trace on hand-built traces, every report format, and the
// low-confidence bytes at the peak (whole allocations and sub-ranges).
#include <doctest/doctest.h>

#include "tbdprof/analyzer/analyze.h"
#include "tbdprof/analyzer/render.h"
#include "tbdprof/analyzer/tag_plausibility.h"
#include "trace_builder.h"

using namespace tbdprof::analyzer;

namespace {

int cat(const char* name) {
    return category_index(name);
}

bool has(const std::vector<std::string>& lines, const std::string& start) {
    for (const std::string& line : lines)
        if (line.rfind(start, 0) == 0) return true;
    return false;
}

// Figures of an SGD run with momentum: 100 weights, 100 gradients, 100 momentum, 500 activations.
MemoryMetrics training_memory() {
    MemoryMetrics m;
    m.allocations = 10;
    m.tagged = true;
    m.at_peak[cat("weights")] = 100;
    m.at_peak[cat("gradients")] = 100;
    m.at_peak[cat("optimizer_state")] = 100;
    m.at_peak[cat("activations")] = 500;
    m.peak_bytes = 800;
    m.category_max = m.at_peak;
    return m;
}

const TagCheckFacts kTraining{.training_iterations = 4, .iterations_with_update = 4, .data_flow = true};

}  // namespace

TEST_CASE("tags of a training run with weights, gradients and an update are plausible") {
    const TagPlausibility tags = check_tag_plausibility(training_memory(), kTraining);
    CHECK(tags.verdict == TagVerdict::plausible);
    CHECK(tags.warnings.empty());
    CHECK(tags.remarks.empty());
    CHECK(tags.summary.find("plausible") != std::string::npos);
}

TEST_CASE("no weights, no gradients, no update: each a reason the breakdown is unreliable") {
    MemoryMetrics m = training_memory();
    m.at_peak[cat("activations")] += m.at_peak[cat("weights")] + m.at_peak[cat("gradients")];
    m.at_peak[cat("weights")] = m.at_peak[cat("gradients")] = 0;
    m.category_max = m.at_peak;
    TagCheckFacts facts = kTraining;
    facts.iterations_with_update = 0;
    const TagPlausibility tags = check_tag_plausibility(m, facts);
    CHECK(tags.verdict == TagVerdict::implausible);
    REQUIRE(tags.warnings.size() == 3);
    CHECK(has(tags.warnings, "no weights: nothing is tagged weights in a run with 4 training iterations"));
    CHECK(tags.warnings[0].find("largest category at the peak is activations, 87.50%") != std::string::npos);
    CHECK(has(tags.warnings, "no gradients"));
    CHECK(has(tags.warnings, "no update found: none of the 4 training iterations has an optimizer phase"));
    CHECK(tags.summary.rfind("memory breakdown unreliable", 0) == 0);
    CHECK(tags.summary.find("3 reasons") != std::string::npos);
}

TEST_CASE("weights that only some moment lacks are still weights: own maxima decide") {
    MemoryMetrics m = training_memory();
    m.at_peak[cat("gradients")] = 0;  // transient gradients, freed before the peak
    m.peak_bytes -= 100;
    CHECK(check_tag_plausibility(m, kTraining).verdict == TagVerdict::plausible);
}

TEST_CASE("one category holding nearly all tagged bytes") {
    MemoryMetrics m = training_memory();
    // Activations at 99.5%: a large batch, not a contradiction; nor a library workspace at 97% of a
    // small model (cnn_static_train --plan block measures 97.4%).
    m.at_peak[cat("activations")] = 59700;
    m.peak_bytes = 60000;
    CHECK(check_tag_plausibility(m, kTraining).verdict == TagVerdict::plausible);
    m = training_memory();
    m.at_peak[cat("workspace")] = 27000;
    m.peak_bytes = 27800;
    CHECK(check_tag_plausibility(m, kTraining).verdict == TagVerdict::plausible);
    // Gradients at 92.78% of the tagged bytes: more than any training run's gradients can be next to
    // its weights. Untagged bytes are not in the denominator: they are no category's.
    m = training_memory();
    m.at_peak[cat("gradients")] = 9000;
    m.at_peak[kUntagged] = 100000;
    m.peak_bytes = 9700 + 100000;
    TagPlausibility tags = check_tag_plausibility(m, kTraining);
    CHECK(tags.verdict == TagVerdict::implausible);
    REQUIRE(tags.warnings.size() == 1);
    CHECK(tags.warnings[0].rfind("one category: 'gradients' holds 92.78% of the tagged bytes at the peak (more than 90%)",
                                 0) == 0);
    CHECK(tags.warnings[0].find("tagged 100 B at the peak") != std::string::npos);
    // 'other' at 95%: the tagger related almost nothing to the steps.
    m = training_memory();
    m.at_peak[cat("other")] = 15200;
    m.peak_bytes = 16000;
    tags = check_tag_plausibility(m, kTraining);
    CHECK(tags.verdict == TagVerdict::implausible);
    CHECK(has(tags.warnings, "one category: 'other' holds 95.00%"));
    CHECK(dominance_limit(cat("optimizer_state")) == 0.90);
    CHECK_FALSE(dominance_limit(cat("weights")).has_value());
    CHECK_FALSE(dominance_limit(cat("input")).has_value());
}

TEST_CASE("no false alarm without iterations: inference, a single step") {
    MemoryMetrics m;
    m.allocations = 3;
    m.tagged = true;
    m.at_peak[cat("other")] = 900;  // what the tagger tags without steps
    m.at_peak[cat("workspace")] = 100;
    m.peak_bytes = 1000;
    m.category_max = m.at_peak;
    const TagPlausibility tags = check_tag_plausibility(
        m, TagCheckFacts{.training_iterations = 0, .iterations_with_update = 0, .data_flow = true});
    CHECK(tags.verdict == TagVerdict::plausible);
    CHECK(tags.warnings.empty());
    CHECK(has(tags.remarks, "no training iterations found: the training checks"));
}

TEST_CASE("without data flow the update is not looked for, and the report says so") {
    MemoryMetrics m = training_memory();
    const TagPlausibility tags = check_tag_plausibility(
        m, TagCheckFacts{.training_iterations = 3, .iterations_with_update = 0, .data_flow = false});
    CHECK(tags.verdict == TagVerdict::plausible);
    CHECK(has(tags.remarks, "no data flow in this trace"));
    CHECK(tags.summary.find("update") == std::string::npos);  // not claimed as found
}

TEST_CASE("untagged traces and traces without allocations are not checked") {
    MemoryMetrics m = training_memory();
    m.tagged = false;
    CHECK(check_tag_plausibility(m, kTraining).verdict == TagVerdict::not_checked);
    CHECK(check_tag_plausibility(MemoryMetrics{}, kTraining).verdict == TagVerdict::not_checked);
}

namespace {

// Three steps with a kernel each reading the weights (data flow), the tagger's iterations and, when
// `update`, an optimizer phase in each. Tags as given; confidence 0.9 unless set.
std::string training_trace(const std::string& name, const char* weights, const char* gradients, bool update,
                           std::optional<double> activation_confidence = 0.9) {
    tbdtest::TraceBuilder t(name);
    for (int i = 0; i < 3; ++i) {
        t.iteration(i * 1000, (i + 1) * 1000);
        t.kernel(i * 1000 + 10, 100);
    }
    if (update) {
        t.exec(
            "INSERT INTO phases (iteration, kind, begin_ns, end_ns) SELECT id, 'optimizer', end_ns - 100, end_ns "
            "FROM iterations");
    }
    t.allocation(400, 0, std::nullopt, weights);
    t.allocation(400, 0, std::nullopt, gradients);
    t.allocation(1200, 100, 900, "activations");
    t.exec(
        "INSERT INTO kernel_allocations (kernel, param, param_word, allocation, offset, read_only) "
        "VALUES (1, 0, 0, 1, 0, 1)");
    t.exec("UPDATE allocation_categories SET confidence = 0.9, rule = 'test'");
    if (activation_confidence)
        t.exec("UPDATE allocation_categories SET confidence = " + std::to_string(*activation_confidence) +
               " WHERE allocation = 3");
    else
        t.exec("UPDATE allocation_categories SET confidence = NULL WHERE allocation = 3");
    return t.finish(3000);
}

}  // namespace

TEST_CASE("analyze_trace: a plausible training trace, and low-confidence bytes per category") {
    const Report r =
        analyze_trace(training_trace("plausible_tags.sqlite", "weights", "gradients", true, 0.5), AnalysisOptions{});
    CHECK(r.memory.tags.verdict == TagVerdict::plausible);
    CHECK(r.memory.low_confidence_at_peak[cat("activations")] == 1200);
    CHECK(r.memory.low_confidence_at_peak[cat("weights")] == 0);
    CHECK(low_confidence_share(r.memory, cat("activations")) == doctest::Approx(1.0));
    CHECK(low_confidence_share(r.memory, cat("weights")) == doctest::Approx(0.0));
    CHECK_FALSE(low_confidence_share(r.memory, cat("workspace")).has_value());  // none at the peak
    CHECK_FALSE(low_confidence_share(r.memory, kUntagged).has_value());
    const std::string text = render_report(r, Format::text);
    CHECK(text.find("memory tags plausible for a training run") != std::string::npos);
    CHECK(text.find("WARNING") == std::string::npos);
    CHECK(text.find("low confidence") != std::string::npos);
    const std::string json = render_json(r);
    CHECK(json.find("\"tags_plausible\": true") != std::string::npos);
    CHECK(json.find("\"tag_warnings\": []") != std::string::npos);
    CHECK(json.find("\"low_confidence_threshold\": 0.7") != std::string::npos);
}

TEST_CASE("a tag without a recorded confidence counts as low confidence") {
    const Report r = analyze_trace(training_trace("null_confidence.sqlite", "weights", "gradients", true, std::nullopt),
                                   AnalysisOptions{});
    CHECK(r.memory.low_confidence_at_peak[cat("activations")] == 1200);
}

TEST_CASE("analyze_trace: 0 B of weights is never shown without the warning, in any format") {
    const Report r = analyze_trace(training_trace("implausible_tags.sqlite", "activations", "activations", false),
                                   AnalysisOptions{});
    CHECK(r.memory.at_peak[cat("weights")] == 0);
    REQUIRE(r.memory.tags.verdict == TagVerdict::implausible);
    CHECK(has(r.memory.tags.warnings, "no weights"));
    CHECK(has(r.memory.tags.warnings, "no gradients"));
    CHECK(has(r.memory.tags.warnings, "no update found: none of the 3 training iterations"));

    const std::string text = render_report(r, Format::text);
    const size_t warning = text.find("WARNING: memory breakdown unreliable");
    const size_t table = text.find("category  ");
    REQUIRE(warning != std::string::npos);
    CHECK(warning < table);  // above the breakdown
    CHECK(text.find("WARNING: no weights") != std::string::npos);
    CHECK(text.find("the categories below are the tags the Memory section calls unreliable") != std::string::npos);
    const std::string markdown = render_report(r, Format::markdown);
    CHECK(markdown.find("> **Warning:** memory breakdown unreliable") != std::string::npos);
    const std::string html = render_report(r, Format::html);
    CHECK(html.find("<p class=\"warning\"><strong>Warning:</strong> memory breakdown unreliable") != std::string::npos);
    const std::string json = render_json(r);
    CHECK(json.find("\"tags_plausible\": false") != std::string::npos);
    CHECK(json.find("\"no weights: nothing is tagged weights") != std::string::npos);

    // compare and diff carry the warning of the run whose tags are unreliable
    const Report good =
        analyze_trace(training_trace("plausible_for_compare.sqlite", "weights", "gradients", true), AnalysisOptions{});
    const std::string compare = render_compare({good, r}, {"good", "bad"}, Format::text);
    CHECK(compare.find("WARNING: bad: memory breakdown unreliable") != std::string::npos);
    CHECK(compare.find("WARNING: good:") == std::string::npos);
    CHECK(compare.find("UNRELIABLE") != std::string::npos);
    CHECK(render_compare({good, r}, {"good", "bad"}, Format::json).find("\"tags_plausible\": false") !=
          std::string::npos);
    const std::string diff = render_diff(good, r, Format::text);
    CHECK(diff.find("WARNING: new: memory breakdown unreliable") != std::string::npos);
    CHECK(render_diff(good, r, Format::json).find("\"new_tag_warnings\": [") != std::string::npos);
}

TEST_CASE("analyze_trace: iterations from ranges, tags without data flow or update: no update alarm") {
    tbdtest::TraceBuilder t("no_dataflow_tags.sqlite");
    for (int i = 0; i < 3; ++i) t.range(i * 1000, (i + 1) * 1000, "step");
    t.kernel(10, 100);
    t.allocation(400, 0, std::nullopt, "weights");
    t.allocation(400, 500, std::nullopt, "gradients");
    t.allocation(1200, 100, 900, "activations");
    const Report r = analyze_trace(t.finish(3000), AnalysisOptions{});
    CHECK(r.memory.tags.verdict == TagVerdict::plausible);
    CHECK(has(r.memory.tags.remarks, "no data flow in this trace"));
}

TEST_CASE("sub-ranges carry their own confidence into the low-confidence bytes") {
    tbdtest::TraceBuilder t("subrange_confidence.sqlite");
    t.allocation(1000, 0, std::nullopt, "activations");  // the segment
    t.allocation(50, 20, 30, "input");                   // makes the peak at 20, inside the sub-ranges' life
    t.exec("UPDATE allocation_categories SET confidence = 0.95");
    t.exec(
        "INSERT INTO allocation_subranges (allocation, offset, bytes, begin_ns, end_ns, category, confidence) VALUES "
        "(1, 0, 300, 10, 90, 'weights', 0.9), (1, 300, 200, 10, 90, 'weights', 0.4), "
        "(1, 500, 100, 10, 90, 'gradients', 0.6)");
    const Report r = analyze_trace(t.finish(100), AnalysisOptions{});
    REQUIRE(r.memory.peak_trace_ns == 20);
    CHECK(r.memory.at_peak[cat("weights")] == 500);
    CHECK(r.memory.low_confidence_at_peak[cat("input")] == 0);
    CHECK(r.memory.low_confidence_at_peak[cat("weights")] == 200);
    CHECK(r.memory.low_confidence_at_peak[cat("gradients")] == 100);
    CHECK(r.memory.low_confidence_at_peak[kUntagged] == 0);
    CHECK(low_confidence_share(r.memory, cat("weights")) == doctest::Approx(0.4));
}
