// Peak FLOP/s per precision of a device, as a multiple of its FP32 peak (devices.fp32_peak_flops,
// which the recorder computes from SM count and clock), from NVIDIA's published data-sheet figures
// (dense, no sparsity), as the GPU catalog (gpu_catalog/) holds them for every stage and the simulated
// devices. A device that is not in the catalog has unknown tensor-core peaks (0).
#pragma once

#include <array>
#include <string_view>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// Ratio to the FP32 peak per Precision (fp32 is 1; 0 = unknown or not supported by the device).
using PeakRatios = std::array<double, kPrecisionCount>;

// By the device's name as the driver reports it ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB").
PeakRatios peak_ratios(std::string_view device_name);

}  // namespace tbdprof::analyzer
