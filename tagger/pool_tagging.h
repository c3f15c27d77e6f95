// Tagging a whole trace model: iterations, then the rules; for pooled traces (a caching allocator)
// on the tensors recovered inside the segments (subranges.h) rather than on the segments.
#pragma once

#include "iterations.h"
#include "model.h"
#include "rules.h"

#include <string>

namespace tbdprof::tagger {

// Detects iterations (into `iterations`) and tags. Without a pooled trace this is exactly
// detect_iterations + tag_allocations.
TagResult tag_model(const TraceModel& model, const std::string& range_name, IterationSet& iterations);

}  // namespace tbdprof::tagger
