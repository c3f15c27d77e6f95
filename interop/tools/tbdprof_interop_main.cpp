// tbdprof-interop: the import/export commands on their own, for tests and benchmarks and until they
// are reached through `tbdprof import` / `tbdprof export`.
#include "tbdprof/interop/commands.h"

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "import") == 0) return tbdprof::interop::import_command(argc - 1, argv + 1);
    if (argc >= 2 && std::strcmp(argv[1], "export") == 0) return tbdprof::interop::export_command(argc - 1, argv + 1);
    std::fputs("usage: tbdprof-interop import TRACE.json[.gz] [-o OUT.sqlite]\n"
               "       tbdprof-interop export TRACE.sqlite --format chrome [-o OUT.json]\n",
               stderr);
    return 2;
}
