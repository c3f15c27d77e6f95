// The trace file's name, and the checks made on it BEFORE the command runs: a long training run must
// not end with "cannot write the trace".
#pragma once

#include <string>

namespace tbdprof::cli {

// tbdprof-<basename of command>-<YYYYmmdd-HHMMSS>.sqlite (local time), in the current directory.
std::string default_output_name(const std::string& command);

// Empty when `path` can be written (and, without `force`, does not exist yet); otherwise one line
// saying why not. Probes by creating and removing `path`.tmp, the file the builder writes first.
std::string check_output_writable(const std::string& path, bool force, bool& usage_error);

}  // namespace tbdprof::cli
