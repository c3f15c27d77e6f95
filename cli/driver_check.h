// Is there a real NVIDIA driver to record on? Checked before running the command so that a machine
// without a GPU gets one clear sentence (and the --sim hint) instead of a CUDA error from the program.
#pragma once

#include <string>

namespace tbdprof::cli {

// True when /dev/nvidiactl exists and a libcuda.so.1 that is not tbdprof's simulated one loads.
// `simgpu_dir` is the simulated GPU's folder (may be empty).
bool nvidia_driver_present(const std::string& simgpu_dir);

}  // namespace tbdprof::cli
