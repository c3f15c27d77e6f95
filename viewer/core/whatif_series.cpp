#include "whatif_series.h"

#include <stdexcept>

#include "tbdprof/analyzer/whatif.h"
#include "trace_loader.h"

namespace tbdprof::viewer {

PredictedMemory predict_series(const std::string& trace_path, const std::string& options) {
    analyzer::WhatIfOptions parsed;
    if (const std::string error = analyzer::parse_whatif_words(options, parsed); !error.empty()) throw LoadError(error);
    parsed.timeline = true;
    analyzer::WhatIfResult result;
    try {
        result = analyzer::predict_memory(trace_path, parsed);
    } catch (const std::exception& e) {
        throw LoadError(e.what());
    }
    PredictedMemory out;
    out.options = options;
    out.cannot_predict = result.cannot_predict;
    if (!result.cannot_predict.empty() || result.scenarios.size() < 2) {
        if (out.cannot_predict.empty()) out.cannot_predict = "no scenario to predict";
        return out;
    }
    analyzer::WhatIfScenario& scenario = result.scenarios.back();
    out.scenario = scenario.name;
    out.peak_bytes = scenario.peak_bytes;
    out.peak_trace_ns = scenario.peak_trace_ns;
    out.verdict = analyzer::fit_verdict_name(scenario.verdict);
    out.series.build(std::move(scenario.timeline));
    return out;
}

}  // namespace tbdprof::viewer
