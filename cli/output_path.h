// The trace file's default name. The checks made on it before the command runs (a long training run
// must not end with "cannot write the trace") are trace::check_output_target's (output_file.h).
#pragma once

#include <string>

namespace tbdprof::cli {

// tbdprof-<basename of command>-<YYYYmmdd-HHMMSS>.sqlite (local time), in the current directory.
std::string default_output_name(const std::string& command);

}  // namespace tbdprof::cli
