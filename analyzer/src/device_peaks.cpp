#include "device_peaks.h"

#include "tbdprof/gpu_catalog/gpu_catalog.h"

namespace tbdprof::analyzer {

PeakRatios peak_ratios(std::string_view device_name) {
    PeakRatios ratios{};
    ratios[static_cast<size_t>(Precision::fp32)] = 1.0;
    const gpu_catalog::GpuSpec* spec = gpu_catalog::find_by_device_name(device_name);
    if (spec == nullptr || spec->peak_tflops.fp32 <= 0) return ratios;
    const gpu_catalog::PeakTflops& peak = spec->peak_tflops;
    ratios[static_cast<size_t>(Precision::tf32)] = peak.tf32 / peak.fp32;
    ratios[static_cast<size_t>(Precision::fp16)] = peak.fp16 / peak.fp32;
    ratios[static_cast<size_t>(Precision::bf16)] = peak.bf16 / peak.fp32;
    ratios[static_cast<size_t>(Precision::fp8)] = peak.fp8 / peak.fp32;
    ratios[static_cast<size_t>(Precision::fp64)] = peak.fp64 / peak.fp32;
    return ratios;
}

}  // namespace tbdprof::analyzer
