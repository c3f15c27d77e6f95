#include "options.h"

#include "framework_presets.h"
#include "tbdprof/gpu_catalog/gpu_catalog.h"

#include <tbdprof/cmdline/command.h>

#include <fmt/format.h>

#include <charconv>
#include <cstring>

namespace tbdprof::cli {
namespace {

bool parse_stack_depth(const std::string& text, int& depth) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxStackDepth) return false;
    depth = value;
    return true;
}

bool parse_buffer_memory(const std::string& text, int& mb) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < kMinBufferMemoryMb ||
        value > kMaxBufferMemoryMb)
        return false;
    mb = value;
    return true;
}

constexpr const char* kUsage =
    "tbdprof [record] [-o FILE] [--sim[=MODEL]] [--stacks N] [--force] [--framework=NAME]\n"
    "               [--iteration-range NAME] [--capture-range=cudaProfilerApi|nvtx:NAME]\n"
    "               [--delay SECONDS] [--duration SECONDS] [--steps N:M]\n"
    "               [--metrics flops] [--max-buffer-memory MB] -- COMMAND [ARGS...]\n"
    "       tbdprof report|compare|diff|check|tag|import|export|build ... (each has --help)\n"
    "       tbdprof view TRACE...       (the desktop viewer, when built with Qt 6)\n"
    "       tbdprof fleet TRACE...      (many ranks' traces on a Dask cluster; --help)";

std::string description() {
    return "Runs COMMAND with the tbdprof collector and writes one SQLite trace of what it did on the GPU:\n"
           "kernels, copies, sets, allocations and frees with their call stacks, which allocations each\n"
           "kernel's arguments point into, and cuBLAS calls with their shapes.";
}

constexpr const char* kFooter =
    "exit status: the command's own status (128+N when a signal N killed it); 2 for usage errors,\n"
    "127 when COMMAND is not found, 126 when it is not executable, 1 for other tbdprof errors.";

// Words given on the command line, checked once all are parsed (the messages name the option).
struct RecordWords {
    std::string sim_model, stacks, framework, iteration_range, metrics, max_buffer_memory;
    CaptureWords capture;
};

std::string check_words(const cmdline::Command& command, int argc, char** argv, const RecordWords& words,
                        RecordOptions& options) {
    const CLI::App& app = const_cast<cmdline::Command&>(command).app();
    for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
        if (std::strcmp(argv[i], "--sim=") == 0) return "--sim= needs a model name";
    if (app.count("--sim") > 0) {
        options.sim = true;
        if (words.sim_model != "default") {
            if (tbdprof::gpu_catalog::find_simulated(words.sim_model) == nullptr)
                return "unknown simulated GPU '" + words.sim_model + "' (known: " + tbdprof::gpu_catalog::simulated_keys() +
                       ")";
            options.sim_model = words.sim_model;
        }
    }
    if (app.count("--stacks") > 0 && !parse_stack_depth(words.stacks, options.stack_depth))
        return fmt::format("bad --stacks value '{}' (want 0 to {})", words.stacks, kMaxStackDepth);
    if (app.count("--framework") > 0) {
        options.framework = words.framework;
        FrameworkPreset ignored;
        if (!resolve_framework(options.framework, {}, ignored))
            return "unknown --framework '" + options.framework + "' (want " + framework_names() + ")";
    }
    if (app.count("--iteration-range") > 0) {
        if (words.iteration_range.empty()) return "--iteration-range needs a range name";
        options.iteration_range = words.iteration_range;
    }
    if (app.count("--metrics") > 0) {
        if (words.metrics != "flops") return "unknown metric set '" + words.metrics + "' for --metrics (known: flops)";
        options.metrics = words.metrics;
    }
    if (app.count("--max-buffer-memory") > 0 &&
        !parse_buffer_memory(words.max_buffer_memory, options.max_buffer_memory_mb))
        return fmt::format("bad --max-buffer-memory value '{}' (want MB, {} to {})", words.max_buffer_memory,
                           kMinBufferMemoryMb, kMaxBufferMemoryMb);
    if (app.count("--output") > 0 && options.output.empty()) return "--output needs a file name";
    return apply_capture_options(app, words.capture, options.capture);
}

}  // namespace

std::optional<int> parse_record_command_line(int argc, char** argv, RecordOptions& options) {
    cmdline::Command command("", kUsage, description());
    CLI::App& app = command.app();
    app.footer(kFooter);
    RecordWords words;
    command.add_output(options.output,
                       "write the trace to FILE (default: tbdprof-<command>-<YYYYmmdd-HHMMSS>.sqlite in the current "
                       "directory)");
    command.add_force(options.force)->description("replace FILE if it exists (without it, tbdprof never overwrites)");
    command.add_quiet(options.quiet, "no summary after the recording (errors and notes still go to stderr)");
    app.add_flag("--sim{default}", words.sim_model,
                 "run on tbdprof's simulated GPU instead of a real one (no GPU needed); --sim=MODEL picks the "
                 "simulated device (TBDSIM_MODEL): " +
                     tbdprof::gpu_catalog::simulated_keys() + " (h100 = h100-sxm, the default)")
        ->option_text("[=MODEL]");
    app.add_option("--stacks", words.stacks, "frames of call stack kept per allocation, 0 to 128 (default 24; 0 = off)")
        ->option_text("N");
    app.add_option("--framework", words.framework,
                   "pytorch, tensorflow, jax, mxnet, auto or none (default): set the framework's allocator so that "
                   "each tensor is its own CUDA allocation (docs/tagging.md)")
        ->option_text("NAME");
    app.add_option("--iteration-range", words.iteration_range,
                   "the NVTX range that marks one training step (default: step-like names)")
        ->option_text("NAME");
    app.add_option("--metrics", words.metrics,
                   "also count each kernel's FP32 and tensor-core FLOPs with CUPTI's hardware counters (flops; "
                   "kernel replay: kernels run one at a time, each several times, so this run's timings are not "
                   "comparable with a run without it)")
        ->option_text("SET");
    app.add_option("--max-buffer-memory", words.max_buffer_memory,
                   "CUPTI buffer memory per process, in MB (default 1024): past half of it the program's threads "
                   "wait for the GPU to catch up, past all of it device records are dropped and counted; the "
                   "report says how long the program was held")
        ->option_text("MB");
    add_capture_options(app, words.capture);
    command.stop_at_first_positional();
    if (const auto status = command.parse(argc, argv)) return status;
    if (std::string bad = check_words(command, argc, argv, words, options); !bad.empty())
        return command.usage_error(bad);
    options.command = command.positional();
    if (options.command.empty())
        return command.usage_error("no command to record (usage: tbdprof [options] -- COMMAND [ARGS...])");
    return std::nullopt;
}

}  // namespace tbdprof::cli
