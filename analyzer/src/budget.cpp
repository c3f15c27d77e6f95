#include "tbdprof/analyzer/budget.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

constexpr std::string_view kLimits[] = {"max-peak-memory",      "min-gpu-utilization", "max-iteration-time",
                                        "max-p95-iteration-time", "min-fp32-utilization", "max-category",
                                        "max-exposed-communication", "max-rank-imbalance", "require-plausible-tags"};

// The check of --require-plausible-tags: the verdict of tag_plausibility.h, its reasons as the message.
CheckResult tags_result(const TagPlausibility& tags) {
    std::string message = tags.summary;
    const std::vector<std::string>& details = tags.verdict == TagVerdict::implausible ? tags.warnings : tags.remarks;
    for (const std::string& detail : details) message += "; " + detail;
    return {"require-plausible-tags", tags.verdict == TagVerdict::plausible, std::move(message)};
}

// Exposed communication as a share of the window, on the rank where it is largest.
CheckResult exposed_result(const Report& r, double limit) {
    const char* name = "max-exposed-communication";
    const int64_t window_ns = r.window.end_ns - r.window.begin_ns;
    if (!r.communication.present || window_ns <= 0) {
        return {name, true, "no communication kernels in the window: exposed communication 0%"};
    }
    const RankCommunication* worst = &r.communication.ranks.front();
    for (const RankCommunication& rank : r.communication.ranks)
        if (rank.figures.exposed_ns > worst->figures.exposed_ns) worst = &rank;
    const double share = static_cast<double>(worst->figures.exposed_ns) / static_cast<double>(window_ns);
    const bool ok = share <= limit;
    const std::string who = worst->rank ? "rank " + std::to_string(*worst->rank) : "process " + std::to_string(worst->process);
    return {name, ok, "exposed communication " + format_percent(share) + " of the window on " + who +
                          (ok ? " <= " : " > ") + "limit " + format_percent(limit)};
}

CheckResult imbalance_result(const CommunicationMetrics& m, double limit) {
    const char* name = "max-rank-imbalance";
    if (!m.imbalance) {
        return {name, false, "cannot check rank imbalance: the trace holds " +
                                 std::string(m.ranks.size() < 2 ? "fewer than two ranks with communication" : "no computation")};
    }
    const bool ok = *m.imbalance <= limit;
    return {name, ok, "rank imbalance (max / median computation) " + format_number(*m.imbalance, 3) +
                          (ok ? " <= " : " > ") + "limit " + format_number(limit, 3)};
}

}  // namespace

bool Budget::empty() const {
    return !max_peak_memory && !min_gpu_utilization && !max_iteration_time_ns && !max_p95_iteration_time_ns &&
           !min_fp32_utilization && !max_exposed_communication && !max_rank_imbalance && max_category.empty() &&
           !require_plausible_tags;
}

bool is_limit_name(std::string_view name) {
    return std::ranges::find(kLimits, name) != std::end(kLimits);
}

bool is_flag_limit(std::string_view name) { return name == "require-plausible-tags"; }

std::string apply_limit(Budget& budget, std::string_view name, std::string_view value) {
    const std::string prefix = "--" + std::string(name) + ": ";
    if (name == "require-plausible-tags") {
        if (value.empty() || value == "true" || value == "yes" || value == "1") budget.require_plausible_tags = true;
        else if (value == "false" || value == "no" || value == "0") budget.require_plausible_tags = false;
        else return prefix + "expected no value, or true or false, got '" + std::string(value) + "'";
        return {};
    }
    if (name == "max-peak-memory" || name == "max-category") {
        std::string_view size = value;
        int category = -1;
        if (name == "max-category") {
            const size_t eq = value.find('=');
            if (eq == std::string_view::npos) return prefix + "expected CATEGORY=SIZE, e.g. activations=8GiB";
            const std::string_view category_text = trim(value.substr(0, eq));
            category = category_index(category_text);
            if (category_text.empty() || category_name(category) != category_text) {
                return prefix + "unknown category '" + std::string(category_text) +
                       "' (weights, gradients, optimizer_state, activations, workspace, input, other, untagged)";
            }
            size = value.substr(eq + 1);
        }
        const Parsed<int64_t> bytes = parse_bytes(size);
        if (!bytes.ok()) return prefix + bytes.error;
        if (category < 0) budget.max_peak_memory = bytes.value;
        else budget.max_category.emplace_back(category, bytes.value);
        return {};
    }
    if (name == "min-gpu-utilization" || name == "min-fp32-utilization" || name == "max-exposed-communication") {
        const Parsed<double> fraction = parse_fraction(value);
        if (!fraction.ok()) return prefix + fraction.error;
        (name == "min-gpu-utilization"    ? budget.min_gpu_utilization
         : name == "min-fp32-utilization" ? budget.min_fp32_utilization
                                          : budget.max_exposed_communication) = fraction.value;
        return {};
    }
    if (name == "max-rank-imbalance") {
        char* end = nullptr;
        const std::string text(trim(value));
        const double ratio = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(ratio >= 1.0) || ratio > 1e9)
            return prefix + "expected a ratio of at least 1 (max / median), e.g. 1.2, got '" + text + "'";
        budget.max_rank_imbalance = ratio;
        return {};
    }
    if (name == "max-iteration-time" || name == "max-p95-iteration-time") {
        const Parsed<int64_t> ns = parse_duration_ns(value);
        if (!ns.ok()) return prefix + ns.error;
        (name == "max-iteration-time" ? budget.max_iteration_time_ns : budget.max_p95_iteration_time_ns) = ns.value;
        return {};
    }
    return "unknown limit '" + std::string(name) + "'";
}

std::string load_budget_file(const std::string& path, Budget& budget) {
    std::ifstream in(path);
    if (!in) return "cannot read budget file " + path;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        std::string_view text = line;
        if (const size_t hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
        text = trim(text);
        if (text.empty()) continue;
        if (text.substr(0, 2) == "--") text.remove_prefix(2);
        const size_t split = text.find_first_of("= \t");
        const std::string where = path + ":" + std::to_string(number) + ": ";
        if (split == std::string_view::npos && is_flag_limit(text)) {
            apply_limit(budget, text, "");
            continue;
        }
        if (split == std::string_view::npos) return where + "expected 'LIMIT = VALUE', got '" + std::string(text) + "'";
        const std::string_view name = trim(text.substr(0, split));
        std::string_view value = trim(text.substr(split));
        if (!value.empty() && value.front() == '=') value = trim(value.substr(1));
        if (!is_limit_name(name)) return where + "unknown limit '" + std::string(name) + "'";
        if (std::string error = apply_limit(budget, name, value); !error.empty()) return where + error;
    }
    return {};
}

std::vector<CheckResult> check_budget(const Report& r, const Budget& budget) {
    std::vector<CheckResult> results;
    auto add = [&](std::string limit, bool passed, std::string message) {
        results.push_back({std::move(limit), passed, std::move(message)});
    };
    if (budget.max_peak_memory) {
        const bool ok = r.memory.peak_bytes <= *budget.max_peak_memory;
        add("max-peak-memory", ok, "peak memory " + format_bytes(r.memory.peak_bytes) + (ok ? " <= " : " > ") +
                                       "limit " + format_bytes(*budget.max_peak_memory));
    }
    for (const auto& [category, limit] : budget.max_category) {
        const int64_t bytes = r.memory.at_peak[static_cast<size_t>(category)];
        const bool ok = bytes <= limit;
        add("max-category " + std::string(category_name(category)), ok, std::string(category_name(category)) + " at peak " + format_bytes(bytes) +
                                    (ok ? " <= " : " > ") + "limit " + format_bytes(limit));
    }
    if (budget.min_gpu_utilization) {
        const bool ok = r.gpu_utilization >= *budget.min_gpu_utilization;
        add("min-gpu-utilization", ok, "GPU utilization " + format_percent(r.gpu_utilization) + (ok ? " >= " : " < ") +
                                           "limit " + format_percent(*budget.min_gpu_utilization) + " (window " +
                                           r.window.used + ")");
    }
    if (budget.min_fp32_utilization) {
        const bool ok = r.flops.fp32_utilization >= *budget.min_fp32_utilization;
        add("min-fp32-utilization", ok, "FP32 utilization " + format_percent(r.flops.fp32_utilization) +
                                            (ok ? " >= " : " < ") + "limit " + format_percent(*budget.min_fp32_utilization));
    }
    auto iteration_limit = [&](const char* limit, const char* what, double seconds, int64_t max_ns) {
        if (r.iterations.count == 0) {
            add(limit, false, std::string("cannot check ") + what + ": no iterations in the trace");
            return;
        }
        const bool ok = seconds * 1e9 <= static_cast<double>(max_ns);
        add(limit, ok, std::string(what) + " " + format_duration_ns(seconds * 1e9) + (ok ? " <= " : " > ") + "limit " +
                           format_duration_ns(static_cast<double>(max_ns)));
    };
    if (budget.max_iteration_time_ns) iteration_limit("max-iteration-time", "mean iteration time", r.iterations.mean_s, *budget.max_iteration_time_ns);
    if (budget.max_p95_iteration_time_ns) {
        iteration_limit("max-p95-iteration-time", "p95 iteration time", r.iterations.p95_s, *budget.max_p95_iteration_time_ns);
    }
    if (budget.max_exposed_communication) results.push_back(exposed_result(r, *budget.max_exposed_communication));
    if (budget.max_rank_imbalance) results.push_back(imbalance_result(r.communication, *budget.max_rank_imbalance));
    if (budget.require_plausible_tags) results.push_back(tags_result(r.memory.tags));
    return results;
}

}  // namespace tbdprof::analyzer
