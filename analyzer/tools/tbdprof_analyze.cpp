// tbdprof-analyze: standalone driver for the analyzer's subcommands, until `tbdprof` wires them.
//   tbdprof-analyze report|compare|diff|check ARGS...
#include <cstdio>
#include <cstring>

#include "tbdprof/analyzer/commands.h"

int main(int argc, char** argv) {
    using namespace tbdprof::analyzer;
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
