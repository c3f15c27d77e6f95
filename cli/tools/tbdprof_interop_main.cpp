// tbdprof-interop: the import/export subcommands (cli/subcommands.h) on their own, for interop's
// tests and benchmarks.
#include "subcommands.h"

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "import") == 0) return tbdprof::cli::import_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "export") == 0) return tbdprof::cli::export_command(argc - 1, argv + 1);
    std::fputs(
        "usage: tbdprof-interop import TRACE.json[.gz] [-o OUT.sqlite]\n"
        "       tbdprof-interop export TRACE.sqlite --format chrome [-o OUT.json]\n",
        stderr);
    return 2;
}
