// The analyzer's command-line subcommands, for `tbdprof report|compare|diff|check` (cli/) and the
// standalone `tbdprof-analyze` driver. argv[0] is the subcommand name; each parses its own options,
// prints usage errors on stderr and returns the process exit status:
//   0 success; 1 check: outside the budget; 2 usage error or bad input (missing, corrupt, too new).
#pragma once

namespace tbdprof::analyzer {

int report_command(int argc, char** argv);
int compare_command(int argc, char** argv);
int diff_command(int argc, char** argv);
int check_command(int argc, char** argv);
// `tbdprof whatif`: 0 predicted; 2 usage error or bad input; 3 the trace cannot carry a prediction.
int whatif_command(int argc, char** argv);

}  // namespace tbdprof::analyzer
