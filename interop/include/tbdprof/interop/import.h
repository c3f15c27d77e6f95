// Import of other profilers' traces into a tbdprof trace (SQLite, schemas/trace.sql).
//
// Accepted inputs (plain or gzip-compressed JSON, from a file, a FIFO, a pipe or stdin as "-"):
//   * Kineto / Chrome trace JSON written by torch.profiler, current layout (categories `kernel`,
//     `cuda_runtime`, `cpu_op`, ...) and the 2021 one (`Kernel`, `Runtime`, `Operator`, ...), either an
//     object with `traceEvents` or a bare event array;
//   * torch.profiler's memory-timeline "raw" export: an array of [ts_ns, action, bytes, category].
// docs/interop.md describes what lands where.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace tbdprof::interop {

// Progress of an import, for a caller that shows it (tbdprof draws a line on a terminal): the stage
// ("parsing 12.3 MB of JSON: 4000 events") and the fraction done (< 0: unknown); called with an
// empty stage when the import is over, done or failed (a progress line is erased then).
using ImportProgress = std::function<void(std::string_view stage, double fraction)>;

struct ImportOptions {
    ImportProgress progress;  // empty: no progress reported
    bool force = false;     // replace an existing output (never the input, a device or a directory)
    // The most JSON bytes read (decompressed) from the input; 0: the default caps (input_file.h:
    // 4 GiB - 1, and a gzip stream at most 100 times its compressed size plus 64 MiB).
    uint64_t max_json_bytes = 0;
};

// What an import found; the command prints it as its summary line.
struct ImportSummary {
    std::string format;  // "kineto", "kineto-2021", "chrome", "memory-timeline"
    uint64_t json_bytes = 0;
    double parse_seconds = 0;  // reading + decompressing + parsing the JSON
    double total_seconds = 0;
    uint64_t events = 0;
    uint64_t kernels = 0, copies = 0, sets = 0;
    uint64_t runtime_calls = 0, sync_calls = 0;
    uint64_t cpu_ops = 0, annotations = 0, gpu_annotations = 0, python_functions = 0;
    uint64_t steps = 0;
    uint64_t memory_events = 0, gpu_memory_events = 0, allocations = 0, freed_allocations = 0;
    bool memory_addresses = false;  // allocations matched by address (otherwise by size, synthetic)
    uint64_t devices = 0, processes = 0, threads = 0, streams = 0;
    std::map<std::string, uint64_t> skipped;   // known but not stored (flows, metadata, ...)
    std::map<std::string, uint64_t> unknown;   // "ph=X cat=foo" -> count
    std::map<std::string, uint64_t> warnings;  // "negative duration" -> count
    // Tagging of the imported trace (import_tagging.h): whether the tagger ran (and why not), and
    // how many allocations keep PyTorch's own category.
    bool tagged = false;
    std::string tag_error;
    uint64_t pytorch_categories = 0;

    std::string summary_line() const;
};

// Converts `input` into a tbdprof trace at `output`, written through trace::OutputFile (a temporary
// renamed only when complete: a failure never leaves a half-written file). Throws InteropError (the
// input), trace::OutputFileError (the output may not be written).
ImportSummary import_trace_file(const std::string& input, const std::string& output, const ImportOptions& options = {});

}  // namespace tbdprof::interop
