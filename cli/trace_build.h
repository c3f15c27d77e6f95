// After the run: the raw files of a run directory become the trace (build, tag, rename into place),
// for `tbdprof record` and `tbdprof build RUN_DIR -o OUT` alike.
#pragma once

#include "run_dir.h"

#include <tbdprof/trace/output_file.h>

#include <string>

namespace tbdprof::cli {

// Builds `run_dir` into `out` with what `info` says about the run, tags it, commits it and prints the
// summary. SIGINT/SIGTERM meanwhile: see build_signals.h. Returns false (after printing why) when
// no trace was written; the run directory is then left as it is.
// `quiet`: no summary.
bool build_into(const std::string& run_dir, const RunInfo& info, const std::string& iteration_range,
                trace::OutputFile& out, bool quiet = false);

// `tbdprof build RUN_DIR -o OUT [--force]`.
int build_command(int argc, char** argv);

}  // namespace tbdprof::cli
