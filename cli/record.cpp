#include "record.h"
#include "static_runtime_note.h"

#include "collector_absent.h"

#include "build_signals.h"
#include "driver_check.h"
#include "framework_presets.h"
#include "install_layout.h"
#include "launcher.h"
#include "output_path.h"
#include "own_output.h"
#include "run_dir.h"
#include "sim_holes.h"
#include "sim_libraries.h"
#include "tbdprof/gpu_catalog/gpu_catalog.h"
#include "trace_build.h"

#include <tbdprof/trace/output_file.h>

#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

namespace tbdprof::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kUsageError = 2;
constexpr int kFailure = 1;

int fail(int status, const std::string& message) {
    say(message);
    return status;
}

std::string join(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
    return text;
}

std::string prepend_path(const std::optional<std::string>& old, const std::string& first) {
    return old && !old->empty() ? first + ":" + *old : first;
}

// PyTorch finds NVIDIA's libraries by DT_RPATH and by path too (sim_libraries.h): under --sim the
// simulated ones are preloaded after the collector, and PYTHONPATH leads torch's by-path loading to
// them. Other programs keep the plain LD_LIBRARY_PATH lookup.
bool load_only_simulated_libraries(const InstallLayout& layout, const std::string& run_dir, Environment& env,
                                   std::string& error) {
    const std::vector<std::string> libraries = simulated_libraries(layout.simgpu_dir);
    const std::string mirror = make_python_library_mirror(run_dir + "/" + kPythonMirrorFolder, libraries, error);
    if (mirror.empty()) return false;
    const char* user_preload = std::getenv("LD_PRELOAD");
    set_variable(env, "LD_PRELOAD",
                 prepend_path(user_preload ? std::optional<std::string>(user_preload) : std::nullopt,
                              layout.preload_library + ":" + preload_list(libraries)));
    set_variable(env, "PYTHONPATH", prepend_path(get_variable(env, "PYTHONPATH"), mirror));
    return true;
}

// A program that is not recorded to a name the user chose (the default, time-stamped name) gets a
// distinct file when two recordings start in the same second: NAME-2.sqlite, NAME-3.sqlite, ...
std::unique_ptr<trace::OutputFile> reserve_default_output(const std::string& base, std::string& error) {
    const std::string stem = base.substr(0, base.size() - std::string(".sqlite").size());
    for (int n = 1; n <= 100; ++n) {
        const std::string candidate = n == 1 ? base : stem + "-" + std::to_string(n) + ".sqlite";
        try {
            return std::make_unique<trace::OutputFile>(
                candidate,
                trace::OutputRules{.force = false, .inputs = {}, .allow_stream = false, .defer_temporary = true});
        } catch (const trace::OutputFileError& e) {
            error = e.what();
            struct stat st {};
            if (::lstat(candidate.c_str(), &st) != 0 &&
                std::string(e.what()).find("another tbdprof") == std::string::npos)
                return nullptr;  // not a name clash: a directory that cannot be written
        }
    }
    return nullptr;
}

void tell_of_abandoned_runs() {
    for (const std::string& dir : abandoned_run_dirs()) {
        const auto info = read_run_info(dir);
        say("note: an earlier recording (" + (info ? info->command_line : std::string("?")) +
            ") was not built: its raw files are in " + dir);
        say("note: build it with: " +
            build_command_for(dir, info && !info->output.empty() ? info->output : "OUT.sqlite") +
            " (or remove the directory)");
    }
}

// The trace file, reserved before the program runs: the name the user chose (checked, replaced
// only with --force) or a fresh time-stamped one. Empty with the exit status on failure.
std::unique_ptr<trace::OutputFile> open_output(const RecordOptions& options, int& status) {
    std::string problem;
    if (options.output.empty()) {
        auto out = reserve_default_output(default_output_name(options.command[0]), problem);
        if (!out) status = fail(kFailure, problem);
        return out;
    }
    problem = trace::check_output_target(options.output, {.force = options.force, .inputs = {}});
    if (!problem.empty()) {
        status = fail(problem.find("use --force") != std::string::npos ? kUsageError : kFailure, problem);
        return nullptr;
    }
    try {
        return std::make_unique<trace::OutputFile>(
            options.output,
            trace::OutputRules{.force = options.force, .inputs = {}, .allow_stream = false, .defer_temporary = true});
    } catch (const trace::OutputFileError& e) {
        status = fail(kFailure, e.what());
        return nullptr;
    }
}

// What a recording needs before the program starts: a known simulated model, the simulated GPU
// or a real driver, and the collector library. The exit status when something is missing.
std::optional<int> missing_prerequisite(const RecordOptions& options, const InstallLayout& layout) {
    if (options.sim && options.sim_model.empty()) {
        if (const char* model = std::getenv("TBDSIM_MODEL");
            model && *model && !tbdprof::gpu_catalog::find_simulated(model))
            return fail(kUsageError, std::string("unknown simulated GPU TBDSIM_MODEL='") + model +
                                         "' (known: " + tbdprof::gpu_catalog::simulated_keys() + ")");
    }
    if (options.sim) {
        if (layout.simgpu_dir.empty())
            return fail(kFailure, "--sim: the simulated GPU (lib/simgpu/libcuda.so.1) was not found next to " +
                                      layout.executable);
    } else if (!nvidia_driver_present(layout.simgpu_dir)) {
        return fail(kFailure,
                    "no NVIDIA driver found (no /dev/nvidiactl or no loadable libcuda.so.1); "
                    "to record on tbdprof's simulated GPU, add --sim");
    }
    if (layout.preload_library.empty())
        return fail(kFailure, "the collector library libtbdprof_preload.so was not found next to " + layout.executable +
                                  " (looked in ../lib and ../lib/tbdprof)");
    return std::nullopt;
}

// The collector's settings and its preload; NVTX ranges reach the collector through NVTX's
// injection hook (docs/collector.md, NVTX). One tool only can receive them; a user's own choice is kept.
void set_collector_environment(const RecordOptions& options, const InstallLayout& layout, const std::string& run_dir,
                               Environment& env) {
    set_variable(env, "TBDPROF_RUN_DIR", run_dir);
    set_variable(env, "TBDPROF_STACK_DEPTH", std::to_string(options.stack_depth));
    set_variable(env, "TBDPROF_MAX_BUFFER_MB", std::to_string(options.max_buffer_memory_mb));
    // Always set: empty (no hardware counters) unless --metrics asked for a set.
    set_variable(env, "TBDPROF_METRICS", options.metrics);
    set_variable(env, "LD_PRELOAD", prepend_path(get_variable(env, "LD_PRELOAD"), layout.preload_library));
    if (auto nvtx_tool = get_variable(env, "NVTX_INJECTION64_PATH"); nvtx_tool && !nvtx_tool->empty()) {
        if (*nvtx_tool != layout.preload_library)
            say("keeping your NVTX_INJECTION64_PATH=" + *nvtx_tool + "; NVTX ranges will not be recorded");
    } else {
        set_variable(env, "NVTX_INJECTION64_PATH", layout.preload_library);
    }
    for (const auto& [name, value] : capture_environment(options.capture)) set_variable(env, name, value);
}

// Under --sim: the simulated libraries first, and the files where they leave their notes.
bool set_simulator_environment(const RecordOptions& options, const InstallLayout& layout, const std::string& run_dir,
                               Environment& env, std::string& error) {
    set_variable(env, "LD_LIBRARY_PATH", prepend_path(get_variable(env, "LD_LIBRARY_PATH"), layout.simgpu_dir));
    if (!options.sim_model.empty()) set_variable(env, "TBDSIM_MODEL", options.sim_model);
    set_variable(env, "TBDSIM_PRIVATE_TABLE_MARK", run_dir + "/" + kStaticRuntimeMark);
    // Where the simulated libraries name the unmodelled functions the program calls (sim_holes.h).
    set_variable(env, "TBDSIM_NOT_MODELLED", run_dir + "/" + kNotModelledFile);
    return !runs_pytorch(options.command) || load_only_simulated_libraries(layout, run_dir, env, error);
}

// The framework preset's variables, where the user has not set them otherwise.
void set_framework_environment(const RecordOptions& options, Environment& env) {
    FrameworkPreset framework;
    resolve_framework(options.framework, options.command, framework);  // validated when parsed
    for (const auto& [name, value] : framework.environment) {
        if (auto existing = get_variable(env, name); existing && *existing != value) {
            say("keeping your " + name + "=" + *existing + " (the " + framework.name + " preset would set " + value +
                ")");
            continue;
        }
        set_variable(env, name, value);
    }
    if (!framework.name.empty()) say(framework.name + " preset: " + framework.cost);
}

void tell_of_signal(const RecordOptions& options, int sig) {
    const bool crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL ||
                       sig == SIGTRAP || sig == SIGSYS;
    const char* name = sigabbrev_np(sig);
    say(options.command[0] + (crash ? " crashed with" : " was killed by") + " signal " + std::to_string(sig) + " (SIG" +
        (name ? name : "?") + "); the trace may lack its last events");
}

// After the program: the trace built from the run directory, which goes unless
// TBDPROF_KEEP_RUN_DIR asks to keep it. Returns the exit status of the recording.
int build_trace_of_run(const RecordOptions& options, const std::string& run_dir, RunInfo& info, trace::OutputFile& out,
                       int exit_status) {
    if (!build_into(run_dir, info, options.iteration_range, out, options.quiet)) {
        say("the raw files are kept in " + run_dir +
            "; once the problem is solved, build them with: " + build_command_for(run_dir, out.target()));
        return exit_status != 0 ? exit_status : kFailure;
    }
    if (std::getenv("TBDPROF_KEEP_RUN_DIR") == nullptr) {
        remove_run_dir(run_dir);
    } else {
        info.built = true;  // kept on purpose: not a recording left behind
        write_run_info(run_dir, info);
        say("raw files kept in " + run_dir);
    }
    return exit_status;
}

}  // namespace

int record(const RecordOptions& options) {
    ignore_sigpipe();  // a note on a closed pipe must not cost the trace (launcher.h)
    const InstallLayout layout = find_install_layout();
    std::string why;
    int not_runnable = 127;
    const std::string program = resolve_command(options.command[0], why, not_runnable);
    if (program.empty()) return fail(not_runnable, "cannot run " + options.command[0] + ": " + why);

    int status = 0;
    const std::unique_ptr<trace::OutputFile> out = open_output(options, status);
    if (!out) return status;
    const std::string output = out->target();
    tell_of_abandoned_runs();
    if (const std::optional<int> missing = missing_prerequisite(options, layout)) return *missing;

    std::string error;
    const std::string run_dir = make_run_dir(error);
    if (run_dir.empty()) return fail(kFailure, error);
    // Held until tbdprof exits: `tbdprof build` refuses the directory meanwhile (run_dir.h).
    [[maybe_unused]] const int run_lock = lock_run_dir(run_dir);

    Environment env = current_environment();
    set_collector_environment(options, layout, run_dir, env);
    if (options.sim && !set_simulator_environment(options, layout, run_dir, env, error)) {
        remove_run_dir(run_dir);
        return fail(kFailure, error);
    }
    set_framework_environment(options, env);

    RunInfo info;
    info.tbdprof_pid = static_cast<int>(getpid());
    info.output = output;
    info.command_line = join(options.command);
    info.device_mode = options.sim ? "simulated" : "real";
    info.sim_model = options.sim_model;
    info.stack_depth = options.stack_depth;
    write_run_info(run_dir, info);  // what a later tbdprof needs if this one is killed

    const ChildOutcome child = run_child(program, options.command, env);
    program_has_run();  // from here on, tbdprof's lines start on a fresh line (own_output.h)
    std::error_code ec;
    if (!child.started) {
        remove_run_dir(run_dir);
        return fail(child.exit_status, "cannot run " + options.command[0] + ": " + child.start_error);
    }
    if (child.signal) tell_of_signal(options, *child.signal);

    // The simulated driver saw NVIDIA's private interface asked for: the static CUDA runtime, which
    // only a real driver can serve. The run is not the program's real behaviour: no trace.
    if (options.sim && fs::exists(fs::path(run_dir) / kStaticRuntimeMark, ec)) {
        const std::string message =
            static_runtime_message((fs::path(run_dir) / kStaticRuntimeMark).string(), options.command[0]);
        remove_run_dir(run_dir);
        return fail(child.exit_status != 0 ? child.exit_status : kFailure, message);
    }

    if (!collector_wrote(run_dir)) say("warning: " + collector_absent_note(options.command, program));
    info.exit_status = child.exit_status;
    info.crash_signal = child.signal;
    // From the exit status on, a signal is one during the build (the run's info says the program
    // ended): handled as such before the info is written, not only once the build begins.
    const BuildSignalGuard signals(run_dir, std::string(), build_command_for(run_dir, out->target()));
    write_run_info(run_dir, info);
    return build_trace_of_run(options, run_dir, info, *out, child.exit_status);
}

}  // namespace tbdprof::cli
