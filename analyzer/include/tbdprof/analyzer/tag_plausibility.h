// Plausibility of the memory tags: the one place that decides whether a trace's category breakdown
// can be believed. A training run with iterations has weights, gradients and an update that rewrites
// the weights each step; tags that contradict this make the breakdown unreliable. The report (every
// format), `tbdprof check --require-plausible-tags` and the viewer read the result from
// MemoryMetrics::tags and the wording from here. Rules and thresholds: docs/analyzer.md,
// "Plausibility of the memory tags".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// A tag whose allocation_categories.confidence (or allocation_subranges.confidence) is below this,
// or has none recorded, is a low-confidence tag. The tagger's fallbacks (lifetimes only, segment
// level, weak evidence) are at 0.6 or below; its data-flow rules at 0.7 or above.
inline constexpr double kLowTagConfidence = 0.7;

// Above this share of the tagged bytes at the peak, one category alone contradicts training; none
// (nullopt) for categories that can legitimately hold nearly all of a run's memory. Gradients are at
// most a small multiple of the weights (one per trained parameter; FP32 gradients of BF16 weights:
// twice), optimizer state a few times them, and 'other' is no role at all: 90% each. Activations
// grow with the batch (a large-batch ResNet-50 is about 98% activations), a library's fixed
// workspace outweighs a small model (up to 97% on our samples), a batch of input can outweigh it,
// and weights dominate a run that trains few of its parameters: no limit.
std::optional<double> dominance_limit(int category);

// What the check needs beyond the report's figures (read from the trace by the analysis).
struct TagCheckFacts {
    int64_t training_iterations = 0;     // iterations found (Report::iterations.detected)
    int64_t iterations_with_update = 0;  // training iterations with an optimizer phase (phases table)
    bool data_flow = true;               // the trace has kernel pointer arguments or library calls to tag from
};

// Pure: from the memory figures (at_peak, category_max, tagged) and the facts.
TagPlausibility check_tag_plausibility(const MemoryMetrics& memory, const TagCheckFacts& facts);

// The lines a breakdown of the run called `label` must carry as warnings: the summary and every
// reason, each as "LABEL: ...", when the tags are implausible; none otherwise (compare, diff).
std::vector<std::string> tag_warning_lines(const TagPlausibility& tags, const std::string& label);

// Share of a category's bytes at the peak tagged with low confidence; none when the category has no
// bytes at the peak, or is 'untagged'.
std::optional<double> low_confidence_share(const MemoryMetrics& memory, int category);
// That share as a report cell: "12.50%", or "-" when there is none.
std::string low_confidence_text(const MemoryMetrics& memory, int category);

}  // namespace tbdprof::analyzer
