// The `tbdprof import` and `tbdprof export` subcommands. argv[0] is the subcommand's own name
// ("import" / "export"), the rest its arguments, so the CLI can hand over its argv shifted by one.
// Both return a process exit status: 0 success, 1 failure (message on stderr), 2 usage error.
#pragma once

namespace tbdprof::interop {

// import TRACE.json[.gz] [-o OUT.sqlite] [--quiet]
int import_command(int argc, char** argv);
// export TRACE.sqlite --format chrome [-o OUT.json]
int export_command(int argc, char** argv);

}  // namespace tbdprof::interop
