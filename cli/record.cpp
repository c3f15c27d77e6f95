#include "record.h"

#include "driver_check.h"
#include "install_layout.h"
#include "launcher.h"
#include "output_path.h"
#include "summary.h"
#include "framework_presets.h"

#include <tbdprof/tagger/tagger.h>

#include <tbdprof/trace/builder.h>
#include <tbdprof/trace/trace_reader.h>

#include <signal.h>
#include <string.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace tbdprof::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kUsageError = 2;
constexpr int kFailure = 1;

int fail(int status, const std::string& message) {
    std::fprintf(stderr, "tbdprof: %s\n", message.c_str());
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

// A private run directory for the raw files: $TMPDIR/tbdprof-run-XXXXXX.
std::string make_run_dir(std::string& error) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tbdprof-run-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
        error = "cannot create a run directory in " + pattern.substr(0, pattern.rfind('/')) + ": " + strerror(errno);
        return {};
    }
    return pattern;
}

void print_summary(const std::string& output) {
    try {
        trace::Database db = trace::open_trace(output);
        std::fputs(format_summary(trace::read_summary(db), output).c_str(), stderr);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tbdprof: cannot summarize %s: %s\n", output.c_str(), e.what());
    }
}

}  // namespace

int record(const RecordOptions& options) {
    const InstallLayout layout = find_install_layout();
    std::string why;
    int not_runnable = 127;
    const std::string program = resolve_command(options.command[0], why, not_runnable);
    if (program.empty()) return fail(not_runnable, "cannot run " + options.command[0] + ": " + why);

    const std::string output = options.output.empty() ? default_output_name(options.command[0]) : options.output;
    bool usage = false;
    if (std::string problem = check_output_writable(output, options.force, usage); !problem.empty())
        return fail(usage ? kUsageError : kFailure, problem);

    if (options.sim) {
        if (layout.simgpu_dir.empty())
            return fail(kFailure, "--sim: the simulated GPU (lib/simgpu/libcuda.so.1) was not found next to " +
                                      layout.executable);
    } else if (!nvidia_driver_present(layout.simgpu_dir)) {
        return fail(kFailure, "no NVIDIA driver found (no /dev/nvidiactl or no loadable libcuda.so.1); "
                              "to record on tbdprof's simulated GPU, add --sim");
    }
    if (layout.preload_library.empty())
        return fail(kFailure, "the collector library libtbdprof_preload.so was not found next to " + layout.executable +
                                  " (looked in ../lib and ../lib/tbdprof)");

    std::string error;
    const std::string run_dir = make_run_dir(error);
    if (run_dir.empty()) return fail(kFailure, error);

    Environment env = current_environment();
    set_variable(env, "TBDPROF_RUN_DIR", run_dir);
    set_variable(env, "TBDPROF_STACK_DEPTH", std::to_string(options.stack_depth));
    // Always set: empty (no hardware counters) unless --metrics asked for a set.
    set_variable(env, "TBDPROF_METRICS", options.metrics);
    set_variable(env, "LD_PRELOAD", prepend_path(get_variable(env, "LD_PRELOAD"), layout.preload_library));
    // NVTX ranges reach the collector through NVTX's injection hook (docs/collector.md, NVTX). One
    // tool only can receive them; a user's own choice is kept.
    if (auto nvtx_tool = get_variable(env, "NVTX_INJECTION64_PATH"); nvtx_tool && !nvtx_tool->empty()) {
        if (*nvtx_tool != layout.preload_library)
            std::fprintf(stderr, "tbdprof: keeping your NVTX_INJECTION64_PATH=%s; NVTX ranges will not be recorded\n",
                         nvtx_tool->c_str());
    } else {
        set_variable(env, "NVTX_INJECTION64_PATH", layout.preload_library);
    }
    if (options.sim) {
        set_variable(env, "LD_LIBRARY_PATH", prepend_path(get_variable(env, "LD_LIBRARY_PATH"), layout.simgpu_dir));
        if (!options.sim_model.empty()) set_variable(env, "TBDSIM_MODEL", options.sim_model);
    }
    FrameworkPreset framework;
    resolve_framework(options.framework, options.command, framework);  // validated when parsed
    for (const auto& [name, value] : framework.environment) {
        if (auto existing = get_variable(env, name); existing && *existing != value) {
            std::fprintf(stderr, "tbdprof: keeping your %s=%s (the %s preset would set %s)\n", name.c_str(),
                         existing->c_str(), framework.name.c_str(), value.c_str());
            continue;
        }
        set_variable(env, name, value);
    }
    if (!framework.name.empty())
        std::fprintf(stderr, "tbdprof: %s preset: %s\n", framework.name.c_str(), framework.cost.c_str());

    const ChildOutcome child = run_child(program, options.command, env);
    std::error_code ec;
    if (!child.started) {
        fs::remove_all(run_dir, ec);
        return fail(child.exit_status, "cannot run " + options.command[0] + ": " + child.start_error);
    }
    if (child.signal) {
        const int sig = *child.signal;
        const bool crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL ||
                           sig == SIGTRAP || sig == SIGSYS;
        const char* name = sigabbrev_np(sig);
        std::fprintf(stderr, "tbdprof: %s %s signal %d (SIG%s); the trace may lack its last events\n",
                     options.command[0].c_str(), crash ? "crashed with" : "was killed by", sig, name ? name : "?");
    }

    trace::BuildOptions build;
    build.run_dir = run_dir;
    build.output = output;
    build.command_line = join(options.command);
    build.exit_status = child.exit_status;
    build.crash_signal = child.signal;
    build.notes = {{"stack_depth", std::to_string(options.stack_depth)},
                   {"device_mode", options.sim ? "simulated" : "real"}};
    if (!options.sim_model.empty()) build.notes.emplace_back("sim_model", options.sim_model);
    const trace::BuildResult built = trace::build_trace(build);
    if (std::getenv("TBDPROF_KEEP_RUN_DIR") == nullptr) fs::remove_all(run_dir, ec);
    else std::fprintf(stderr, "tbdprof: raw files kept in %s\n", run_dir.c_str());
    if (!built.ok) {
        std::fprintf(stderr, "tbdprof: cannot build the trace: %s\n", built.error.c_str());
        return child.exit_status != 0 ? child.exit_status : kFailure;
    }
    for (const std::string& warning : built.warnings) std::fprintf(stderr, "tbdprof: note: %s\n", warning.c_str());
    // Memory categories, iterations and phases. A trace that cannot be tagged stays a valid,
    // untagged trace: tagging rolls back as a whole.
    tagger::TagOptions tag_options;
    tag_options.iteration_range = options.iteration_range;
    tagger::TagSummary tagged;
    std::string tag_error;
    if (!tagger::tag_trace_file(output, tag_options, tagged, tag_error))
        std::fprintf(stderr, "tbdprof: note: memory tagging failed: %s (run `tbdprof tag` to retry)\n", tag_error.c_str());
    else if (tagged.iterations == 0)
        std::fprintf(stderr, "tbdprof: note: no training iterations found (%s)\n", tagged.note.c_str());
    print_summary(output);
    return child.exit_status;
}

}  // namespace tbdprof::cli
