// `tbdprof record`: check everything, run the command under the collector, build the trace, summarize.
#pragma once

#include "options.h"

namespace tbdprof::cli {

// Returns tbdprof's exit status.
int record(const RecordOptions& options);

}  // namespace tbdprof::cli
