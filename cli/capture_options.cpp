#include "capture_options.h"

#include <cmath>
#include <cstdlib>

namespace tbdprof::cli {
namespace {

bool parse_seconds(const std::string& text, uint64_t& duration_ns) {
    if (text.empty()) return false;
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return false;
    duration_ns = static_cast<uint64_t>(std::llround(seconds * 1e9));
    return true;
}

bool parse_steps(const std::string& text, int64_t& first, int64_t& last) {
    const size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
    auto number = [](const std::string& s, int64_t& v) {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 15) return false;
        v = std::strtoll(s.c_str(), nullptr, 10);
        return true;
    };
    return number(text.substr(0, colon), first) && number(text.substr(colon + 1), last) && first <= last;
}

}  // namespace

void add_capture_options(CLI::App& app, CaptureWords& words) {
    app.add_option("--capture-range", words.range,
                   "cudaProfilerApi: record only between cudaProfilerStart/Stop (cuProfilerStart/Stop), "
                   "repeatable windows; nvtx:NAME: only inside NVTX ranges named exactly NAME. Allocations "
                   "and frees are always recorded")
        ->option_text("MODE");
    app.add_option("--delay", words.delay, "start recording SECONDS after the program started")->option_text("SECONDS");
    app.add_option("--duration", words.duration, "stop recording SECONDS after it started")->option_text("SECONDS");
    app.add_option("--steps", words.steps,
                   "record iterations N to M (0-based): by step-like NVTX ranges, else by the repeating launch "
                   "sequence (docs/collector.md, Capture control)")
        ->option_text("N:M");
}

std::string apply_capture_options(const CLI::App& app, const CaptureWords& words, CaptureOptions& out) {
    auto given = [&app](const char* name) { return app.count(name) > 0; };
    if (given("--capture-range")) {
        if (words.range != "cudaProfilerApi" && !(words.range.rfind("nvtx:", 0) == 0 && words.range.size() > 5))
            return "bad --capture-range '" + words.range + "' (want cudaProfilerApi or nvtx:NAME)";
        out.range = words.range;
    }
    if (given("--steps")) {
        if (!parse_steps(words.steps, out.first_step, out.last_step))
            return "bad --steps '" + words.steps + "' (want N:M, 0-based iterations, N <= M)";
        out.has_steps = true;
    }
    if (given("--delay")) {
        if (!parse_seconds(words.delay, out.delay_ns)) return "bad --delay '" + words.delay + "' (want seconds, 0 or more)";
        out.has_delay = true;
    }
    if (given("--duration")) {
        if (!parse_seconds(words.duration, out.duration_ns) || out.duration_ns == 0)
            return "bad --duration '" + words.duration + "' (want seconds, above 0)";
        out.has_duration = true;
    }
    const int kinds = (out.range.empty() ? 0 : 1) + (out.has_steps ? 1 : 0) + (out.has_delay || out.has_duration ? 1 : 0);
    if (kinds > 1) return "--capture-range, --steps and --delay/--duration cannot be combined (pick one)";
    return {};
}

std::vector<std::pair<std::string, std::string>> capture_environment(const CaptureOptions& o) {
    if (!o.range.empty()) return {{"TBDPROF_CAPTURE", o.range}};
    if (o.has_steps)
        return {{"TBDPROF_CAPTURE", "steps:" + std::to_string(o.first_step) + ":" + std::to_string(o.last_step)}};
    if (o.has_delay || o.has_duration)
        return {{"TBDPROF_CAPTURE", "time"},
                {"TBDPROF_CAPTURE_DELAY_NS", std::to_string(o.delay_ns)},
                {"TBDPROF_CAPTURE_DURATION_NS", std::to_string(o.duration_ns)}};
    return {};
}

}  // namespace tbdprof::cli
