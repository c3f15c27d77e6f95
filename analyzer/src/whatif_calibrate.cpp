// Calibrating the batch with a second recorded run (whatif_calibrate.h).
#include "whatif_calibrate.h"

#include <algorithm>

namespace tbdprof::analyzer::whatif {

std::vector<double> calibrate(const RecordedRun& run, const WhatIfOptions& options, std::string& why,
                              std::vector<std::string>& notes) {
    const RecordedRun other = read_run(options.calibrate_path, false);
    if (other.real_count != run.real_count) {
        why = "the calibration run has " + std::to_string(other.real_count) + " device allocations, the recorded " +
              std::to_string(run.real_count) + ": they cannot be matched in order (same program and iterations?)";
        return {};
    }
    const double m1 = static_cast<double>(*options.batch_size_recorded);
    const double m2 = static_cast<double>(*options.calibrate_batch_size);
    const double n = static_cast<double>(*options.batch_size);
    std::vector<double> fitted(run.real_count);
    size_t differing = 0;
    for (size_t i = 0; i < run.real_count; ++i) {
        const double y1 = static_cast<double>(run.allocations[i].bytes);
        const double y2 = static_cast<double>(other.allocations[i].bytes);
        const double slope = (y2 - y1) / (m2 - m1);
        fitted[i] = std::max(0.0, y1 + slope * (n - m1));
        if (run.allocations[i].listed_category != other.allocations[i].listed_category) ++differing;
    }
    if (differing > 0)
        notes.push_back(std::to_string(differing) +
                        " allocations matched in order carry different tags in the two runs; the recorded run's "
                        "tags are used");
    return fitted;
}

}  // namespace tbdprof::analyzer::whatif
