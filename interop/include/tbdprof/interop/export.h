// Export of a tbdprof trace to Chrome trace JSON (the format Perfetto UI and chrome://tracing open).
#pragma once

#include <cstdint>
#include <string>

namespace tbdprof::interop {

struct ExportSummary {
    uint64_t slices = 0, flows = 0, counter_events = 0, instant_events = 0;
    uint64_t bytes_written = 0;
};

// Writes `output` through trace::OutputFile (a temporary, then rename; a device or FIFO is written
// directly). Throws InteropError (the input), trace::OutputFileError (the output: refused, disk full).
// `force`: replace an existing output (never the input, a device or a directory).
ExportSummary export_chrome_trace(const std::string& trace_path, const std::string& output, bool force = false);

}  // namespace tbdprof::interop
