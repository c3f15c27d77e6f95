// The scenarios the what-if options ask for (whatif_scenarios.h).
#include "whatif_scenarios.h"

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer::whatif {

namespace {

std::string batch_name(const WhatIfOptions& options, double scale) {
    if (options.batch_size) return "batch " + std::to_string(*options.batch_size);
    return "batch x" + format_number(scale);
}

}  // namespace

bool only_changes_batch(const ScenarioSpec& spec) {
    return spec.batch_scale && *spec.batch_scale != 1.0 && !spec.calibrated && !spec.precision &&
           spec.zero_stage == 0 && !spec.checkpoint;
}

bool changes_batch_by_factor(const ScenarioSpec& spec) {
    return spec.batch_scale && *spec.batch_scale != 1.0 && !spec.calibrated && !spec.checkpoint;
}

std::vector<ScenarioSpec> scenario_list(const WhatIfOptions& options, std::optional<double> scale) {
    std::vector<ScenarioSpec> specs{{"recorded", std::nullopt, false, std::nullopt, 0}};
    ScenarioSpec all{"", std::nullopt, false, std::nullopt, 0};
    std::vector<std::string> parts;
    if (scale) {
        const bool calibrated = !options.calibrate_path.empty();
        const std::string name = batch_name(options, *scale) + (calibrated ? " (calibrated)" : "");
        specs.push_back({name, scale, calibrated, std::nullopt, 0});
        all.batch_scale = scale;
        all.calibrated = calibrated;
        parts.push_back(name);
    }
    if (options.precision) {
        specs.push_back({storage_precision_name(*options.precision), std::nullopt, false, options.precision, 0});
        all.precision = options.precision;
        parts.push_back(storage_precision_name(*options.precision));
    }
    if (options.zero_stage > 0) {
        const std::string name =
            "ZeRO-" + std::to_string(options.zero_stage) + " x" + std::to_string(options.ranks) + " ranks";
        specs.push_back({name, std::nullopt, false, std::nullopt, options.zero_stage});
        all.zero_stage = options.zero_stage;
        parts.push_back(name);
    }
    if (options.checkpoint) {
        const std::string name = options.checkpoint_every_layers > 0
                                     ? "checkpoint every " + std::to_string(options.checkpoint_every_layers) + " layers"
                                     : "checkpoint sqrt";
        ScenarioSpec spec{name, std::nullopt, false, std::nullopt, 0};
        spec.checkpoint = true;
        specs.push_back(spec);
        all.checkpoint = true;
        parts.push_back(name);
    }
    if (parts.size() > 1) {
        for (size_t i = 0; i < parts.size(); ++i) all.name += (i ? ", " : "") + parts[i];
        specs.push_back(all);
    }
    return specs;
}

}  // namespace tbdprof::analyzer::whatif
