// The simulated GPU's word on the functions it does not model that the program called: the
// simulator appends them to the file TBDSIM_NOT_MODELLED names (format in docs/simgpu.md,
// "Unmodelled functions"), which `tbdprof record --sim` points into the run directory.
#pragma once

#include <tbdprof/trace/sim_notes.h>

#include <string>
#include <vector>

namespace tbdprof::cli {

// The file's name in the run directory.
inline constexpr const char* kNotModelledFile = "not-modelled";

// Each function once (whichever processes called it), in the order first called; lines that are not
// `PID<TAB>NAME<TAB>RESULT` are skipped. Empty when the file is absent.
std::vector<trace::UnmodelledCall> read_unmodelled_calls(const std::string& run_dir);

}  // namespace tbdprof::cli
