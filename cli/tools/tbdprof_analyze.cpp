// tbdprof-analyze: the reading subcommands (cli/subcommands.h) on their own, for the analyzer's
// tests and benchmarks.
//   tbdprof-analyze report|compare|diff|check ARGS...
#include <cstdio>
#include <cstring>

#include "subcommands.h"

int main(int argc, char** argv) {
    using namespace tbdprof::cli;
    if (argc < 2) {
        std::fprintf(stderr, "usage: tbdprof-analyze report|compare|diff|check ARGS... (--help after a command)\n");
        return 2;
    }
    const char* command = argv[1];
    // The subcommand sees itself as argv[0], as it will under `tbdprof`.
    if (std::strcmp(command, "report") == 0) return report_command(argc - 1, argv + 1);
    if (std::strcmp(command, "compare") == 0) return compare_command(argc - 1, argv + 1);
    if (std::strcmp(command, "diff") == 0) return diff_command(argc - 1, argv + 1);
    if (std::strcmp(command, "check") == 0) return check_command(argc - 1, argv + 1);
    std::fprintf(stderr, "tbdprof-analyze: unknown command '%s' (report, compare, diff, check)\n", command);
    return 2;
}
