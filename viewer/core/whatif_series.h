// The Memory view's predicted timeline: the analyzer's what-if replay (docs/whatif.md) of one
// scenario, as a series on the recorded run's time axis, drawn over the recorded one.
#pragma once

#include <optional>
#include <string>

#include "memory_series.h"

namespace tbdprof::viewer {

struct PredictedMemory {
    std::string options;         // the what-if options as given ("--batch-scale 2")
    std::string scenario;        // the scenario shown: every change applied (the last the analyzer lists)
    int64_t peak_bytes = 0;      // as `tbdprof whatif` gives it for that scenario
    int64_t peak_trace_ns = 0;   // when, on the recorded trace time
    std::string verdict;         // "fits", "borderline", "does not fit", "unknown"
    std::string cannot_predict;  // non-empty: no prediction (the analyzer's reason); series empty
    MemorySeries series;
};

// Parses `options` as `tbdprof whatif` does and predicts; throws LoadError (trace_loader.h) with the
// analyzer's sentence for bad options or an unreadable trace.
PredictedMemory predict_series(const std::string& trace_path, const std::string& options);

}  // namespace tbdprof::viewer
