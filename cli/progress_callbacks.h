// The progress lines of the subcommands over the libraries: the analyzer and the importer report
// progress through a callback (AnalysisOptions::progress, ImportOptions::progress), and tbdprof
// draws it as one self-overwriting line on stderr (cmdline/progress.h), only on a terminal and
// without --quiet.
#pragma once

#include <tbdprof/analyzer/analyze.h>
#include <tbdprof/interop/import.h>

namespace tbdprof::cli {

// "tbdprof: reading kernels 37% (2.1 s)", once a scan has taken a second; empty (no progress) with
// --quiet or when stderr is not a terminal.
analyzer::AnalysisProgress analysis_progress(bool quiet);

// "tbdprof import: parsing 12.3 MB of JSON: 4000 events (0.8 s)", once an import has taken half a
// second; empty with --quiet or when stderr is not a terminal.
interop::ImportProgress import_progress(bool quiet);

}  // namespace tbdprof::cli
