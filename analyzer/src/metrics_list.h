// The headline numbers of a report as a flat list, for compare and diff.
#pragma once

#include <string>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

enum class Unit { fraction, bytes, flops, rate, seconds, count, cores };

struct Metric {
    std::string key;    // the JSON report key, e.g. "fp32.flops_per_s"
    std::string label;  // for tables
    Unit unit;
    double value;
};

std::vector<Metric> headline_metrics(const Report& report);
std::string format_metric(Unit unit, double value);

}  // namespace tbdprof::analyzer
