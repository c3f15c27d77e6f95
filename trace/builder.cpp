#include "tbdprof/trace/builder.h"

#include "tbdprof/trace/output_file.h"

#include "kernel_stage.h"
#include "model_builder.h"
#include "tbdprof/trace/sqlite_handle.h"
#include "tbdprof/trace/trace_writer.h"
#include "tbdprof/version.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <new>
#include <optional>
#include <stdexcept>

namespace tbdprof::trace {
namespace {

namespace fs = std::filesystem;

void load_processes(const std::vector<std::string>& paths, std::vector<detail::RawProcess>& processes,
                    BuildResult& result) {
    processes.reserve(paths.size());
    for (const std::string& path : paths) {
        detail::RawProcess process;
        std::string error;
        if (!process.file.open(path, error)) {
            result.warnings.push_back("skipped " + error);
            continue;
        }
        detail::decode_raw_process(process);
        if (process.end != RawFileEnd::Clean) {
            result.warnings.push_back(fs::path(path).filename().string() + " " + describe(process.end) +
                                      " at byte " + std::to_string(process.end_offset) +
                                      "; events after it are lost");
        }
        if (process.end == RawFileEnd::Clean && !process.has_end) {
            // Nothing was cut, yet the collector never did its last flush: what it still held is lost.
            result.warnings.push_back("process " + std::to_string(process.file.header().pid) +
                                      " ended without tbdprof's last flush (exit_group, SIGKILL or a lost "
                                      "descriptor): the events of its last milliseconds may be missing");
        }
        if (process.unknown_records > 0) {
            result.warnings.push_back(fs::path(path).filename().string() + ": skipped " +
                                      std::to_string(process.unknown_records) + " records of unknown kinds");
        }
        processes.push_back(std::move(process));
    }
}

void add_counter_warnings(const detail::BuildCounters& c, BuildResult& result) {
    if (c.unmatched_frees > 0)
        result.warnings.push_back(std::to_string(c.unmatched_frees) + " frees of memory with no recorded allocation");
    if (c.reused_addresses > 0)
        result.warnings.push_back(std::to_string(c.reused_addresses) +
                                  " allocations at an address whose previous allocation was never freed");
    if (c.paired_without_correlation > 0)
        result.warnings.push_back(std::to_string(c.paired_without_correlation) +
                                  " device records had lost their correlation record (dropped while recording): "
                                  "each was paired with its host call by order and name, and stored once");
    if (c.orphan_device_records > 0)
        result.warnings.push_back(std::to_string(c.orphan_device_records) +
                                  " device records without a matching host call");
}

constexpr int total_build_steps = 13;  // build_model's twelve steps and the writing

detail::TraceModel build_model(const BuildOptions& options, std::vector<detail::RawProcess>& processes,
                               BuildResult& result) {
    detail::TraceModel model;
    model.run.tool_version = kProductVersion;
    model.run.command_line = options.command_line;
    model.run.exit_status = options.exit_status;
    model.run.crash_signal = options.crash_signal;
    detail::ModelBuilder builder(model, processes);
    // The steps in order, for the progress line; the last one is writing the file.
    using Step = void (detail::ModelBuilder::*)();
    const std::pair<const char*, Step> steps[] = {
        {"processes", &detail::ModelBuilder::build_processes_and_threads},
        {"devices", &detail::ModelBuilder::build_devices},
        {"library calls", &detail::ModelBuilder::build_library_calls},
        {"graph launches", &detail::ModelBuilder::build_graph_launches},
        {"kernels", &detail::ModelBuilder::build_kernels},
        {"copies and sets", &detail::ModelBuilder::build_copies_and_sets},
        {"API calls and ranges", &detail::ModelBuilder::build_api_calls_and_ranges},
        {"call stacks", &detail::ModelBuilder::build_stacks_and_frames},
        {"allocations", &detail::ModelBuilder::build_allocations_and_edges},
        {"memory regions", &detail::ModelBuilder::build_memory_regions},
        {"samples", &detail::ModelBuilder::build_samples_and_drops},
        {"kernel metrics", &detail::ModelBuilder::build_kernel_metrics},
    };
    const int total = total_build_steps;
    static_assert(std::size(steps) + 1 == total_build_steps);
    for (int i = 0; i < total - 1; ++i) {
        if (options.progress) options.progress(steps[i].first, i, total);
        (builder.*steps[i].second)();
    }
    builder.finish_run_row();
    add_counter_warnings(builder.counters(), result);
    result.events = builder.counters().events;
    if (model.run.host_timed_kernels > 0) {
        result.warnings.push_back(std::to_string(model.run.host_timed_kernels) +
                                  " kernels have no device record: their times are host launch times");
    }
    model.notes = options.notes;
    for (const auto& note : builder.recording_notes()) model.notes.push_back(note);
    // CUDA graphs: how many replays ran, and how much work stream capture recorded (not run itself).
    const detail::BuildCounters& counters = builder.counters();
    if (counters.graph_launches > 0 || counters.captured_launches > 0 || counters.captured_transfers > 0) {
        model.notes.emplace_back("graph_replays", std::to_string(counters.graph_launches));
        model.notes.emplace_back("captured_launches", std::to_string(counters.captured_launches));
        model.notes.emplace_back("captured_copies_and_sets", std::to_string(counters.captured_transfers));
    }
    for (const std::string& w : result.warnings) model.notes.emplace_back("warning", w);
    return model;
}

// The build holds each kernel's device record and joins in memory (about 64 B per kernel: the 48 B
// device record, 4 B indices; launches are read back from the raw file, kernel rows and edges wait on
// disk, docs/benchmarks.md "Trace build memory"); out of memory it stops cleanly: the caller's
// OutputFile removes its temporary and lock.
std::string out_of_memory_message(size_t raw_files) {
    return "out of memory while building the trace from " + std::to_string(raw_files) +
           " raw files (the build holds about 64 bytes per kernel in memory); nothing was written";
}

}  // namespace

BuildResult build_trace(const BuildOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    BuildResult result;
    std::string error;
    const std::vector<std::string> paths = list_raw_files(options.run_dir, error);
    if (!error.empty()) {
        result.error = error;
        return result;
    }
    result.raw_files = paths.size();
    std::vector<detail::RawProcess> processes;
    detail::TraceModel model;
    try {
        load_processes(paths, processes, result);
        model = build_model(options, processes, result);
        // The rows copy what they need (names are interned strings): the decoded events and the
        // mapped files are not needed while writing, so their memory is not held at the same time.
        std::vector<detail::RawProcess>().swap(processes);
    } catch (const std::bad_alloc&) {
        result.error = out_of_memory_message(paths.size());
        return result;
    } catch (const std::runtime_error& e) {
        // The kernel stage's temporary file (kernel_stage.h) could not be written or read.
        result.error = std::string("cannot build the trace: ") + e.what() + "; nothing was written";
        return result;
    }

    std::optional<OutputFile> own_output;
    try {
        if (options.output_file == nullptr) own_output.emplace(options.output, OutputRules{.force = true, .inputs = {}});
        OutputFile& out = options.output_file ? *options.output_file : *own_output;
        if (options.progress) options.progress("writing", total_build_steps - 1, total_build_steps);
        detail::write_trace(out.temp_path(), model);
        if (own_output) own_output->commit();
    } catch (const std::bad_alloc&) {
        result.error = out_of_memory_message(paths.size());
        return result;
    } catch (const SqliteError& e) {
        result.error = e.what();
        if (std::string(e.what()).find("full") != std::string::npos)
            result.error += " (disk full: nothing was written to " + options.output + ")";
        return result;
    } catch (const std::exception& e) {
        result.error = e.what();
        return result;
    }
    result.ok = true;
    result.kernels = model.kernels.size() + model.kernel_stage->kernels();
    result.copies = model.copies.size();
    result.sets = model.sets.size();
    result.allocations = model.allocations.size();
    result.edges = model.edges.size() + model.kernel_stage->edges();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
}

}  // namespace tbdprof::trace
