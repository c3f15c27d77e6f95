#include "trace_build.h"

#include <tbdprof/cmdline/command.h>
#include <tbdprof/cmdline/progress.h>

#include <fmt/format.h>

#include "build_signals.h"
#include "collector_messages.h"
#include "launcher.h"
#include "own_output.h"
#include "sim_holes.h"
#include "summary.h"

#include <tbdprof/tagger/tagger.h>
#include <tbdprof/trace/builder.h>
#include <tbdprof/trace/safe_text.h>
#include <tbdprof/trace/trace_reader.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <system_error>
#include <thread>

namespace tbdprof::cli {
namespace {

// Whether `path` names something inside `dir` (or `dir` itself), after resolving links.
bool inside_directory(const std::string& path, const std::string& dir) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
    const std::filesystem::path base = std::filesystem::weakly_canonical(dir, ec);
    if (ec) return false;
    const auto [end, _] = std::mismatch(base.begin(), base.end(), parent.begin(), parent.end());
    return end == base.end();
}

void print_summary(const std::string& output) {
    try {
        trace::Database db = trace::open_trace(output);
        const std::string summary = format_summary(trace::read_summary(db), output);
        begin_own_output();
        std::fputs(summary.c_str(), stderr);
    } catch (const std::exception& e) {
        say("cannot summarize " + output + ": " + e.what());
    }
}

}  // namespace

bool build_into(const std::string& run_dir, const RunInfo& info, const std::string& iteration_range,
                trace::OutputFile& out, bool quiet) {
    print_collector_messages(run_dir);
    // A program that failed on a function the simulated GPU does not model is told which one.
    const std::vector<trace::UnmodelledCall> holes = read_unmodelled_calls(run_dir);
    for (const trace::UnmodelledCall& hole : holes) say(trace::printable(trace::describe_unmodelled_call(hole)));
    std::string temporary;
    try {
        temporary = out.temp_path();
    } catch (const trace::OutputFileError& e) {
        say(std::string("cannot build the trace: ") + e.what());
        return false;
    }
    const BuildSignalGuard signals(run_dir, temporary, build_command_for(run_dir, out.target()));
    if (cmdline::progress_wanted(quiet)) begin_own_output();  // the progress line returns to column 0
    cmdline::ProgressLine line("tbdprof", cmdline::progress_wanted(quiet));
    // For the tests of signals during the build only: a build long enough to be interrupted.
    if (const char* pause = std::getenv("TBDPROF_TEST_BUILD_PAUSE_MS"); pause && *pause) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::atoi(pause));
        while (std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    trace::BuildOptions build;
    build.run_dir = run_dir;
    build.output = out.target();
    build.output_file = &out;
    build.command_line = info.command_line;
    build.exit_status = info.exit_status;
    build.crash_signal = info.crash_signal;
    build.progress = [&line](const char* stage, int step, int steps) {
        line.update(fmt::format("building the trace: {}", stage), static_cast<double>(step) / steps);
    };
    build.notes = {{"stack_depth", std::to_string(info.stack_depth)}, {"device_mode", info.device_mode}};
    if (!info.sim_model.empty()) build.notes.emplace_back("sim_model", info.sim_model);
    for (const trace::UnmodelledCall& hole : holes) build.notes.push_back(trace::unmodelled_call_note(hole));
    trace::BuildResult built;
    try {
        built = trace::build_trace(build);
    } catch (const std::bad_alloc&) {  // what build_trace does not catch itself (the progress line)
        built.error = "out of memory while building the trace; nothing was written";
    }
    line.clear();
    if (!built.ok) {
        say("cannot build the trace: " + built.error);
        return false;
    }
    for (const std::string& warning : built.warnings) say("note: " + warning);
    // Memory categories, iterations and phases, before the rename: the trace appears complete. A
    // trace that cannot be tagged stays a valid, untagged trace: tagging rolls back as a whole.
    tagger::TagOptions tag_options;
    tag_options.iteration_range = iteration_range;
    line.update("tagging memory");
    try {
        const tagger::TagSummary tagged = tagger::tag_trace_file(out.temp_path(), tag_options);
        line.clear();
        if (tagged.iterations == 0) say("note: no training iterations found (" + tagged.note + ")");
    } catch (const tagger::TagError& e) {
        line.clear();
        say(std::string("note: memory tagging failed: ") + e.what() + " (run `tbdprof tag` to retry)");
    } catch (const std::bad_alloc&) {
        line.clear();
        say("note: memory tagging ran out of memory (run `tbdprof tag` to retry)");
    }
    try {
        out.commit();
    } catch (const trace::OutputFileError& e) {
        say(e.what());
        return false;
    }
    if (!quiet) print_summary(out.target());
    return true;
}

int build_command(int argc, char** argv) {
    cmdline::Command command("build", "tbdprof build RUN_DIR -o OUT [--force] [--quiet] [--iteration-range NAME]",
                             "Builds the trace of a recording whose build was stopped or whose tbdprof was killed,\n"
                             "from the raw files its run directory kept, then removes what the recording wrote there.\n"
                             "Only the run directory of a recording that has ended (its tbdprof-run.info names it) is\n"
                             "touched; the trace must be written outside it.");
    std::string output, iteration_range;
    bool force = false, quiet = false;
    command.add_output(output, "the trace to write (required)");
    command.add_force(force);
    command.add_quiet(quiet, "no summary of the trace");
    command.app()
        .add_option("--iteration-range", iteration_range, "the NVTX range that marks one training step")
        ->option_text("NAME");
    if (const auto status = command.parse(argc, argv)) return *status;
    if (command.positional().size() != 1)
        return command.usage_error("give one run directory (see tbdprof build --help)");
    if (output.empty()) return command.usage_error("-o OUT is required (see tbdprof build --help)");
    const std::string& run_dir = command.positional()[0];
    ignore_sigpipe();  // its notes on a closed pipe must not cost the trace (launcher.h)
    RunInfo info;
    int lock_fd = -1;
    if (const std::string why = check_finished_run_dir(run_dir, info, lock_fd); !why.empty()) {
        std::fprintf(stderr, "tbdprof build: %s\n", why.c_str());
        return 1;
    }
    // The run directory is removed once built: the trace must not be inside it.
    if (inside_directory(output, run_dir)) {
        ::close(lock_fd);
        std::fprintf(stderr,
                     "tbdprof build: -o %s is inside the run directory %s, which is removed once built; "
                     "write the trace elsewhere\n",
                     output.c_str(), run_dir.c_str());
        return 2;
    }
    if (info.device_mode.empty()) info.device_mode = "unknown";
    int status = 0;
    try {
        trace::OutputFile out(output, trace::OutputRules{.force = force, .inputs = {}});
        if (!build_into(run_dir, info, iteration_range, out, quiet)) {
            status = 1;
            say("the raw files are kept in " + run_dir +
                "; once the problem is solved, build them with: " + build_command_for(run_dir, output));
        }
    } catch (const trace::OutputFileError& e) {
        std::fprintf(stderr, "tbdprof build: %s\n", e.what());
        status = std::strstr(e.what(), "use --force") ? 2 : 1;
    }
    if (status == 0 && !remove_run_dir(run_dir))
        std::fprintf(stderr, "tbdprof build: note: %s was kept: it holds files that tbdprof did not write\n",
                     run_dir.c_str());
    ::close(lock_fd);
    return status;
}

}  // namespace tbdprof::cli
