#include "device_peaks.h"

namespace tbdprof::analyzer {
namespace {

struct Entry {
    std::string_view name_part;  // matched as a substring of the device name, first match wins
    // TF32, FP16, BF16, FP8, FP64 peaks and the FP32 peak the data sheet gives, in TFLOP/s.
    double tf32, fp16, bf16, fp8, fp64, fp32;
};

// H100 SXM5 and H200 SXM: FP32 66.9, TF32 494.7, FP16/BF16 989.4, FP8 1978.9, FP64 33.5 (vector).
// H100 PCIe: FP32 51.2, TF32 378, FP16/BF16 756, FP8 1513, FP64 25.6. A100 (SXM and PCIe): FP32
// 19.5, TF32 156, FP16/BF16 312, FP64 9.7. V100: FP32 15.7, FP16 tensor cores 125, FP64 7.8; no
// TF32 or BF16 tensor cores (their requests run at the FP32 rate or not at all).
constexpr Entry kTable[] = {
    {"H100 PCIe", 378.0, 756.0, 756.0, 1513.0, 25.6, 51.2},
    {"H100", 494.7, 989.4, 989.4, 1978.9, 33.5, 66.9},
    {"H200", 494.7, 989.4, 989.4, 1978.9, 33.5, 66.9},
    {"A100", 156.0, 312.0, 312.0, 0.0, 9.7, 19.5},
    {"V100", 0.0, 125.0, 0.0, 0.0, 7.8, 15.7},
};

}  // namespace

PeakRatios peak_ratios(std::string_view device_name) {
    PeakRatios ratios{};
    ratios[static_cast<size_t>(Precision::fp32)] = 1.0;
    for (const Entry& e : kTable) {
        if (device_name.find(e.name_part) == std::string_view::npos) continue;
        ratios[static_cast<size_t>(Precision::tf32)] = e.tf32 / e.fp32;
        ratios[static_cast<size_t>(Precision::fp16)] = e.fp16 / e.fp32;
        ratios[static_cast<size_t>(Precision::bf16)] = e.bf16 / e.fp32;
        ratios[static_cast<size_t>(Precision::fp8)] = e.fp8 / e.fp32;
        ratios[static_cast<size_t>(Precision::fp64)] = e.fp64 / e.fp32;
        break;
    }
    return ratios;
}

}  // namespace tbdprof::analyzer
