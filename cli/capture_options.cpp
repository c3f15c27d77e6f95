#include "capture_options.h"

#include <cmath>
#include <cstdlib>

namespace tbdprof::cli {
namespace {

bool parse_seconds(const std::string& text, uint64_t& out_ns) {
    if (text.empty()) return false;
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return false;
    out_ns = static_cast<uint64_t>(std::llround(seconds * 1e9));
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

CaptureParse parse_capture_option(const std::vector<std::string>& args, size_t& i, CaptureOptions& out,
                                  std::string& error) {
    const std::string& arg = args[i];
    std::string name = arg, value;
    bool inline_value = false;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        inline_value = true;
    }
    if (name != "--capture-range" && name != "--delay" && name != "--duration" && name != "--steps")
        return CaptureParse::NotMine;
    if (!inline_value) {
        if (i + 1 >= args.size()) {
            error = name + " needs a value";
            return CaptureParse::Error;
        }
        value = args[++i];
    }
    if (name == "--capture-range") {
        if (value == "cudaProfilerApi" || (value.rfind("nvtx:", 0) == 0 && value.size() > 5)) {
            out.range = value;
            return CaptureParse::Parsed;
        }
        error = "bad --capture-range '" + value + "' (want cudaProfilerApi or nvtx:NAME)";
        return CaptureParse::Error;
    }
    if (name == "--steps") {
        if (parse_steps(value, out.first_step, out.last_step)) {
            out.has_steps = true;
            return CaptureParse::Parsed;
        }
        error = "bad --steps '" + value + "' (want N:M, 0-based iterations, N <= M)";
        return CaptureParse::Error;
    }
    uint64_t& target = name == "--delay" ? out.delay_ns : out.duration_ns;
    if (!parse_seconds(value, target) || (name == "--duration" && target == 0)) {
        error =
            "bad " + name + " '" + value + "' (want seconds" + (name == "--duration" ? ", above 0)" : ", 0 or more)");
        return CaptureParse::Error;
    }
    (name == "--delay" ? out.has_delay : out.has_duration) = true;
    return CaptureParse::Parsed;
}

std::string check_capture_options(const CaptureOptions& o) {
    const int kinds = (o.range.empty() ? 0 : 1) + (o.has_steps ? 1 : 0) + (o.has_delay || o.has_duration ? 1 : 0);
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

const char* capture_usage() {
    return "  --capture-range=cudaProfilerApi  record only between cudaProfilerStart/Stop (cuProfilerStart/Stop);\n"
           "                     repeatable windows. Allocations and frees are always recorded\n"
           "  --capture-range=nvtx:NAME  record only inside NVTX ranges named exactly NAME\n"
           "  --delay SECONDS    start recording SECONDS after the program started\n"
           "  --duration SECONDS stop recording SECONDS after it started\n"
           "  --steps N:M        record iterations N to M (0-based): by step-like NVTX ranges, else by the\n"
           "                     repeating launch sequence (docs/collector.md, Capture control)\n";
}

}  // namespace tbdprof::cli
