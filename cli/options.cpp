#include "options.h"

#include "framework_presets.h"
#include "gpu_model.h"

#include <charconv>

namespace tbdprof::cli {
namespace {

bool parse_stack_depth(const std::string& text, int& depth) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxStackDepth) return false;
    depth = value;
    return true;
}

ParsedCommandLine usage_error(std::string message) {
    ParsedCommandLine parsed;
    parsed.action = ParsedCommandLine::Action::UsageError;
    parsed.error = std::move(message);
    return parsed;
}

}  // namespace

std::string usage_text() {
    return "usage: tbdprof [record] [-o FILE] [--sim[=MODEL]] [--stacks N] [--force] [--framework=NAME]\n"
           "               [--iteration-range NAME] [--capture-range=cudaProfilerApi|nvtx:NAME]\n"
           "               [--delay SECONDS] [--duration SECONDS] [--steps N:M]\n"
           "               [--metrics flops] -- COMMAND [ARGS...]\n"
           "       tbdprof report|compare|diff|check|tag|import|export|build ... (each has --help)\n"
           "       tbdprof view TRACE...       (the desktop viewer, when built with Qt 6)\n"
           "\n"
           "Runs COMMAND with the tbdprof collector and writes one SQLite trace of what it did on the GPU:\n"
           "kernels, copies, sets, allocations and frees with their call stacks, which allocations each\n"
           "kernel's arguments point into, and cuBLAS calls with their shapes.\n"
           "\n"
           "options:\n"
           "  -o, --output FILE  write the trace to FILE (default: tbdprof-<command>-<YYYYmmdd-HHMMSS>.sqlite\n"
           "                     in the current directory)\n"
           "  --force            replace FILE if it exists (without it, tbdprof never overwrites)\n"
           "  --sim[=MODEL]      run on tbdprof's simulated GPU instead of a real one (no GPU needed);\n"
           "                     MODEL picks the simulated device (TBDSIM_MODEL): " + simgpu::known_gpu_model_keys() +
           "\n                     (h100 = h100-sxm, the default)\n"
           "  --stacks N         frames of call stack kept per allocation, 0 to 128 (default 24; 0 = off)\n"
           "  --framework=NAME   pytorch, tensorflow, jax, mxnet, auto or none (default): set the framework's\n"
           "                     allocator so that each tensor is its own CUDA allocation (docs/tagging.md)\n"
           "  --iteration-range NAME  the NVTX range that marks one training step (default: step-like names)\n"
           + std::string(capture_usage()) +
           "  --metrics flops    also count each kernel's FP32 and tensor-core FLOPs with CUPTI's hardware\n"
           "                     counters (kernel replay: kernels run one at a time, each several times,\n"
           "                     so this run's timings are not comparable with a run without it)\n"
           "  -h, --help         show this text\n"
           "  --version          show the tbdprof version and the trace format version\n"
           "\n"
           "exit status: the command's own status (128+N when a signal N killed it); 2 for usage errors,\n"
           "127 when COMMAND is not found, 126 when it is not executable, 1 for other tbdprof errors.\n";
}

ParsedCommandLine parse_command_line(const std::vector<std::string>& args) {
    ParsedCommandLine parsed;
    RecordOptions& options = parsed.record;
    size_t i = 0;
    if (i < args.size() && args[i] == "record") ++i;
    for (; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg.empty() || arg[0] != '-') break;  // the command starts here
        if (arg == "-h" || arg == "--help") {
            parsed.action = ParsedCommandLine::Action::Help;
            return parsed;
        }
        if (arg == "--version") {
            parsed.action = ParsedCommandLine::Action::Version;
            return parsed;
        }
        std::string capture_error;
        if (const CaptureParse c = parse_capture_option(args, i, options.capture, capture_error);
            c != CaptureParse::NotMine) {
            if (c == CaptureParse::Error) return usage_error(capture_error);
            continue;
        }
        if (arg == "--force") {
            options.force = true;
        } else if (arg == "--sim") {
            options.sim = true;
        } else if (arg.rfind("--sim=", 0) == 0) {
            options.sim = true;
            options.sim_model = arg.substr(6);
            if (options.sim_model.empty()) return usage_error("--sim= needs a model name");
            if (simgpu::find_gpu_model(options.sim_model) == nullptr)
                return usage_error("unknown simulated GPU '" + options.sim_model + "' (known: " +
                                   simgpu::known_gpu_model_keys() + ")");
        } else if (arg.rfind("--framework=", 0) == 0) {
            options.framework = arg.substr(12);
            FrameworkPreset ignored;
            if (!resolve_framework(options.framework, {}, ignored))
                return usage_error("unknown --framework '" + options.framework + "' (want " + framework_names() + ")");
        } else if (arg == "--iteration-range") {
            if (i + 1 >= args.size() || args[i + 1].empty()) return usage_error("--iteration-range needs a range name");
            options.iteration_range = args[++i];
        } else if (arg.rfind("--iteration-range=", 0) == 0) {
            options.iteration_range = arg.substr(18);
            if (options.iteration_range.empty()) return usage_error("--iteration-range= needs a range name");
        } else if (arg == "--metrics" || arg.rfind("--metrics=", 0) == 0) {
            if (arg == "--metrics" && i + 1 >= args.size()) return usage_error("--metrics needs a metric set (flops)");
            const std::string value = arg == "--metrics" ? args[++i] : arg.substr(10);
            if (value != "flops") return usage_error("unknown metric set '" + value + "' for --metrics (known: flops)");
            options.metrics = value;
        } else if (arg == "-o" || arg == "--output" || arg == "--stacks") {
            if (i + 1 >= args.size()) return usage_error(arg + " needs a value");
            const std::string& value = args[++i];
            if (arg == "--stacks") {
                if (!parse_stack_depth(value, options.stack_depth))
                    return usage_error("bad --stacks value '" + value + "' (want 0 to " + std::to_string(kMaxStackDepth) + ")");
            } else {
                if (value.empty()) return usage_error(arg + " needs a file name");
                options.output = value;
            }
        } else if (arg.rfind("--output=", 0) == 0) {
            options.output = arg.substr(9);
            if (options.output.empty()) return usage_error("--output= needs a file name");
        } else if (arg.rfind("--stacks=", 0) == 0) {
            const std::string value = arg.substr(9);
            if (!parse_stack_depth(value, options.stack_depth))
                return usage_error("bad --stacks value '" + value + "' (want 0 to " + std::to_string(kMaxStackDepth) + ")");
        } else if (arg.size() > 2 && arg.rfind("-o", 0) == 0) {
            options.output = arg.substr(2);
        } else {
            return usage_error("unknown option '" + arg + "' (see tbdprof --help)");
        }
    }
    if (std::string bad = check_capture_options(options.capture); !bad.empty()) return usage_error(bad);
    options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (options.command.empty()) return usage_error("no command to record (usage: tbdprof [options] -- COMMAND [ARGS...])");
    parsed.action = ParsedCommandLine::Action::Record;
    return parsed;
}

}  // namespace tbdprof::cli
