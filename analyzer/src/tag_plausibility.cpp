// Plausibility of the memory tags (tbdprof/analyzer/tag_plausibility.h): does the breakdown agree
// with what every training run has? Facts from the trace (iterations, phases, whether there is data
// flow at all), then rules on the memory figures, each finding a sentence a user can act on.
#include "tbdprof/analyzer/tag_plausibility.h"

#include <fmt/format.h>

#include <unordered_set>

#include "analysis_parts.h"
#include "tbdprof/analyzer/units.h"
#include "tbdprof/trace/tables.h"

namespace tbdprof::analyzer {
namespace {

constexpr int kWeights = static_cast<int>(trace::Category::weights);
constexpr int kGradients = static_cast<int>(trace::Category::gradients);
constexpr int kOther = static_cast<int>(trace::Category::other);

std::string percent_limit(double fraction) {
    return fmt::format("{:.0f}%", fraction * 100.0);
}

int64_t tagged_at_peak(const MemoryMetrics& m) {
    return m.peak_bytes - m.at_peak[kUntagged];
}

// The category holding the most tagged bytes at the peak, and its share of them; -1 when none.
std::pair<int, double> largest_category(const MemoryMetrics& m) {
    const int64_t tagged = tagged_at_peak(m);
    int largest = -1;
    for (int c = 0; c < kCategoryCount; ++c) {
        if (c == kUntagged || m.at_peak[c] <= 0) continue;
        if (largest < 0 || m.at_peak[c] > m.at_peak[largest]) largest = c;
    }
    if (largest < 0 || tagged <= 0) return {-1, 0.0};
    return {largest, static_cast<double>(m.at_peak[largest]) / static_cast<double>(tagged)};
}

std::string iterations_text(int64_t n) {
    return std::to_string(n) + (n == 1 ? " training iteration" : " training iterations");
}

// The rules that need iterations: a training run has weights, gradients and an update each step,
// and neither gradients, optimizer state nor 'other' holds nearly all of its memory.
void check_training(const MemoryMetrics& m, const TagCheckFacts& facts, TagPlausibility& out) {
    const std::string its = iterations_text(facts.training_iterations);
    const auto [largest, largest_share] = largest_category(m);
    if (m.category_max[kWeights] <= 0) {
        std::string reason = "no weights: nothing is tagged weights in a run with " + its +
                             "; training keeps its parameters in device memory, so they were tagged as something else";
        if (largest >= 0)
            reason += std::string(" (the largest category at the peak is ") + category_name(largest) + ", " +
                      format_percent(largest_share) + " of the tagged bytes)";
        out.warnings.push_back(std::move(reason));
    }
    if (m.category_max[kGradients] <= 0) {
        out.warnings.push_back("no gradients: nothing is tagged gradients in " + its +
                               ", though backward writes one for every trained parameter each step (an inference "
                               "loop has none; then its iterations are not training steps)");
    }
    if (facts.data_flow && facts.iterations_with_update == 0) {
        out.warnings.push_back("no update found: none of the " + its +
                               " has an optimizer phase, the work that rewrites the weights each step; without it "
                               "weights, gradients and optimizer state cannot be told apart");
    }
    const std::optional<double> limit = largest >= 0 ? dominance_limit(largest) : std::nullopt;
    if (limit && largest_share > *limit) {
        out.warnings.push_back(std::string("one category: '") + category_name(largest) + "' holds " +
                               format_percent(largest_share) + " of the tagged bytes at the peak (more than " +
                               percent_limit(*limit) + "); " +
                               (largest == kOther ? std::string("the tagger related almost nothing to the training steps")
                                                  : "in training it is at most a few times the weights, tagged " +
                                                        format_bytes(m.at_peak[kWeights]) + " at the peak"));
    }
}

// Training iterations (the tagger's table, validation passes left out) that have an optimizer phase.
int64_t iterations_with_update(const TraceFile& trace) {
    std::unordered_set<int64_t> training;
    trace::RowReader<trace::IterationRow> iterations(trace.db);
    for (trace::IterationRow row; iterations.next(row);)
        if (row.training()) training.insert(row.id);
    std::unordered_set<int64_t> updated;
    trace::RowReader<trace::PhaseRow> phases(trace.db);
    for (trace::PhaseRow row; phases.next(row);)
        if (row.kind == "optimizer" && training.count(row.iteration)) updated.insert(row.iteration);
    return static_cast<int64_t>(updated.size());
}

// Data flow is what the tagger's rules read: which kernel points into which allocation, library
// operands. An imported profiler trace has neither; its tags come from lifetimes and range names.
bool has_data_flow(TraceFile& trace) {
    const bool edges = trace::has_table(trace.db, "kernel_allocations") &&
                       trace.db.query_int("SELECT EXISTS (SELECT 1 FROM kernel_allocations)") != 0;
    return edges || trace.db.query_int("SELECT EXISTS (SELECT 1 FROM library_calls)") != 0;
}

}  // namespace

std::optional<double> dominance_limit(int category) {
    switch (static_cast<trace::Category>(category)) {
    case trace::Category::gradients:
    case trace::Category::optimizer_state:
    case trace::Category::other: return 0.90;
    default: return std::nullopt;
    }
}

TagPlausibility check_tag_plausibility(const MemoryMetrics& m, const TagCheckFacts& facts) {
    TagPlausibility out;
    if (m.allocations == 0 || m.peak_bytes <= 0) {
        out.summary = "memory tags not checked: the trace has no device allocations";
        return out;
    }
    if (!m.tagged) {
        out.summary = "memory tags not checked: the allocations are not tagged (`tbdprof tag TRACE` tags them)";
        return out;
    }
    if (!facts.data_flow) {
        out.remarks.push_back(
            "no data flow in this trace (no kernel pointer arguments, no library calls: an imported profiler trace): "
            "categories come from lifetimes and range names only, and whether an update rewrites the weights "
            "each step is not checked");
    }
    if (facts.training_iterations <= 0) {
        out.remarks.push_back(
            "no training iterations found: the training checks (weights, gradients, an update each step) do not "
            "apply, as to an inference run; without steps, categories rest on library roles and lifetimes only");
        out.verdict = TagVerdict::plausible;
        out.summary = "memory tags: no training iterations to check them against";
        return out;
    }
    check_training(m, facts, out);
    const size_t n = out.warnings.size();
    out.verdict = n == 0 ? TagVerdict::plausible : TagVerdict::implausible;
    out.summary = n == 0
                      ? std::string("memory tags plausible for a training run: ") +
                            (facts.data_flow ? "weights, gradients and an update found" : "weights and gradients found")
                      : "memory breakdown unreliable: the tags contradict a training run (" + std::to_string(n) +
                            (n == 1 ? " reason" : " reasons") + "); read its categories as guesses";
    return out;
}

std::vector<std::string> tag_warning_lines(const TagPlausibility& tags, const std::string& label) {
    std::vector<std::string> lines;
    if (tags.verdict != TagVerdict::implausible) return lines;
    lines.push_back(label + ": " + tags.summary);
    for (const std::string& warning : tags.warnings) lines.push_back(label + ": " + warning);
    return lines;
}

std::optional<double> low_confidence_share(const MemoryMetrics& m, int category) {
    if (category < 0 || category >= kCategoryCount || category == kUntagged || m.at_peak[category] <= 0)
        return std::nullopt;
    return static_cast<double>(m.low_confidence_at_peak[category]) / static_cast<double>(m.at_peak[category]);
}

std::string low_confidence_text(const MemoryMetrics& m, int category) {
    const std::optional<double> share = low_confidence_share(m, category);
    return share ? format_percent(*share) : "-";
}

TagCheckFacts read_tag_check_facts(TraceFile& trace, int64_t training_iterations, bool tagged) {
    TagCheckFacts facts;
    facts.training_iterations = training_iterations;
    if (tagged) {
        facts.iterations_with_update = iterations_with_update(trace);
        facts.data_flow = has_data_flow(trace);
    }
    return facts;
}

void check_tags(TraceFile& trace, Report& report) {
    const TagCheckFacts facts = read_tag_check_facts(trace, report.iterations.detected, report.memory.tagged);
    report.memory.tags = check_tag_plausibility(report.memory, facts);
}

}  // namespace tbdprof::analyzer
