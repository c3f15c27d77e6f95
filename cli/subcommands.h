// The subcommands over the libraries: `tbdprof report|compare|diff|check|whatif` (the analyzer),
// `tbdprof tag` (the tagger), `tbdprof import|export` (interop),
// `tbdprof merge` (trace). Each declares its option table on
// a cmdline::Command, calls the library's plain functions and prints the result. argv[0] is the
// subcommand's own name, so that the CLI hands over its argv shifted by one. Exit status:
//   report, compare, diff: 0 success; 2 usage error or bad input (missing, corrupt, too new);
//   check: 0 within budget; 1 outside it; 2 usage error or bad input; 3 the trace could not be read now;
//   whatif: 0 predicted; 2 usage error or bad input; 3 the trace cannot carry a prediction;
//   tag, import, export, merge: 0 success; 1 failure (message on stderr); 2 usage error.
#pragma once

namespace tbdprof::cli {

int report_command(int argc, char** argv);
int compare_command(int argc, char** argv);
int diff_command(int argc, char** argv);
int check_command(int argc, char** argv);
int whatif_command(int argc, char** argv);
// tag TRACE [--iteration-range NAME] [--explain ID]
int tag_command(int argc, char** argv);
// import TRACE.json[.gz] [-o OUT.sqlite] [--quiet]
int import_command(int argc, char** argv);
// export TRACE.sqlite --format chrome [-o OUT.json]
int export_command(int argc, char** argv);
// merge HOST_TRACE... -o OUT.sqlite [--offset-ns NS]...
int merge_command(int argc, char** argv);

}  // namespace tbdprof::cli
