// CI budgets: limits a run must stay within (from options or a budget file), the check, JUnit XML.
//
// Budget file: one limit per line, the option name with or without its leading "--", then the value
// after '=' or whitespace; '#' starts a comment:
//     max-peak-memory = 12GiB
//     min-gpu-utilization = 0.8
//     max-iteration-time = 250ms
//     max-category activations=8GiB
//     max-exposed-communication = 0.1
//     max-rank-imbalance = 1.2
//     require-plausible-tags          (a flag: no value, or true/false)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

struct Budget {
    std::optional<int64_t> max_peak_memory;
    std::optional<double> min_gpu_utilization;
    std::optional<int64_t> max_iteration_time_ns;      // mean iteration time
    std::optional<int64_t> max_p95_iteration_time_ns;
    std::optional<double> min_fp32_utilization;
    // Exposed communication / window, on the rank with the most (communication.cpp).
    std::optional<double> max_exposed_communication;
    std::optional<double> max_rank_imbalance;  // max / median computation over the trace's ranks
    std::vector<std::pair<int, int64_t>> max_category;  // (category index, bytes at peak)
    // The memory tags must be plausible (tag_plausibility.h): implausible or unchecked tags fail.
    bool require_plausible_tags = false;
    bool empty() const;
};

// The limit names (without "--") a budget understands.
bool is_limit_name(std::string_view name);
// Limits that are flags: given alone they mean "true" (require-plausible-tags).
bool is_flag_limit(std::string_view name);
// Sets one limit; returns an error sentence (empty on success).
std::string apply_limit(Budget& budget, std::string_view name, std::string_view value);
// Reads a budget file into `budget`; returns an error sentence naming the file and line.
std::string load_budget_file(const std::string& path, Budget& budget);

struct CheckResult {
    std::string limit;   // e.g. "max-peak-memory"
    bool passed = false;
    std::string message; // "peak memory 13.2 GiB > limit 12.00 GiB"
};

std::vector<CheckResult> check_budget(const Report& report, const Budget& budget);
std::string junit_xml(const std::string& trace_path, const std::vector<CheckResult>& results);

}  // namespace tbdprof::analyzer
