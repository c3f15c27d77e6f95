// `tbdprof check --whatif`: memory limits judged on a predicted configuration (whatif_check.h).
#include "tbdprof/analyzer/whatif_check.h"

#include <cmath>
#include <string>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

// The predicted bytes with the model's error added, against a limit.
CheckResult judge(const std::string& limit_name, const std::string& what, int64_t predicted, int64_t limit,
                  double margin, const std::string& scenario) {
    const auto with_error = static_cast<int64_t>(std::ceil(static_cast<double>(predicted) * (1.0 + margin)));
    const bool ok = with_error <= limit;
    return {limit_name, ok,
            "predicted " + what + " " + format_bytes(predicted) + " (" + scenario + "; with the model's " +
                format_percent(margin) + " error " + format_bytes(with_error) + ")" + (ok ? " <= " : " > ") + "limit " +
                format_bytes(limit)};
}

}  // namespace

Budget without_memory_limits(Budget budget) {
    budget.max_peak_memory.reset();
    budget.max_category.clear();
    return budget;
}

std::vector<CheckResult> check_whatif_memory(const std::string& trace_path, const WhatIfOptions& options,
                                             const Budget& budget) {
    const WhatIfResult result = predict_memory(trace_path, options);
    std::vector<CheckResult> results;
    std::vector<std::pair<std::string, std::string>> limits;  // (limit name, category or "")
    if (budget.max_peak_memory) limits.emplace_back("max-peak-memory", "");
    for (const auto& [category, bytes] : budget.max_category)
        limits.emplace_back("max-category " + std::string(category_name(category)), category_name(category));
    if (!result.cannot_predict.empty() || result.scenarios.size() < 2) {
        const std::string why = result.cannot_predict.empty() ? "no change given" : result.cannot_predict;
        for (const auto& [name, category] : limits) results.push_back({name, false, "cannot predict: " + why});
        return results;
    }
    const WhatIfScenario& planned = result.scenarios.back();  // every change together
    if (budget.max_peak_memory)
        results.push_back(judge("max-peak-memory", "peak memory", planned.peak_bytes, *budget.max_peak_memory,
                                result.fit_margin, planned.name));
    for (const auto& [category, bytes] : budget.max_category)
        results.push_back(judge(
            "max-category " + std::string(category_name(category)), std::string(category_name(category)) + " at peak",
            planned.at_peak[static_cast<size_t>(category)], bytes, result.fit_margin, planned.name));
    return results;
}

}  // namespace tbdprof::analyzer
