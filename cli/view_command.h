// `tbdprof view TRACE...`: opens the traces in the desktop viewer, tbdprof-viewer, found next to
// the tbdprof executable (build/bin or PREFIX/bin), like the collector is. Every argument is passed on.
#pragma once

namespace tbdprof::cli {

int view_command(int argc, char** argv);  // argv[0] is "view"

}  // namespace tbdprof::cli
