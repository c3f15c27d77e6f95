#include "gpu_model.h"

#include <array>

namespace simgpu {
namespace {

constexpr uint64_t GiB = 1024ull * 1024 * 1024;

// Figures from NVIDIA's public data sheets (boost clocks, SM counts, memory size and bandwidth).
// PCIe bandwidth is the effective pinned-memory rate, not the link's nominal one. Tensor-core ratios
// are the data sheets' dense figures over their FP32 figure (H100/H200 SXM: TF32 494.7, FP16/BF16
// 989.4, FP32 66.9 TFLOP/s; A100: 156 / 312 / 19.5; V100: FP16 125 / FP32 15.7, no TF32, which runs
// at the FP32 rate); the analyzer's table of peaks (analyzer/src/device_peaks.cpp) uses the same.
const std::array<GpuModel, 5> kModels = {{
    {"h100-sxm", "NVIDIA H100 80GB HBM3", 9, 0, 132, 128, 1980000, 2619000, 5120, 80 * GiB,
     50 * 1024 * 1024, 3.35e12, 50e9, 494.7 / 66.9, 989.4 / 66.9, 0.5},
    {"h200", "NVIDIA H200", 9, 0, 132, 128, 1980000, 3201000, 6144, 141ull * 1000000000ull,
     60 * 1024 * 1024, 4.8e12, 50e9, 494.7 / 66.9, 989.4 / 66.9, 0.5},
    {"a100-sxm", "NVIDIA A100-SXM4-80GB", 8, 0, 108, 64, 1410000, 1593000, 5120, 80 * GiB,
     40 * 1024 * 1024, 2.039e12, 25e9, 8.0, 16.0, 0.5},
    {"v100-sxm", "Tesla V100-SXM2-32GB", 7, 0, 80, 64, 1530000, 877000, 4096, 32 * GiB,
     6 * 1024 * 1024, 0.9e12, 12e9, 1.0, 125.0 / 15.7, 0.5},
    {"rtx4090", "NVIDIA GeForce RTX 4090", 8, 9, 128, 128, 2520000, 10501000, 384, 24 * GiB,
     72 * 1024 * 1024, 1.008e12, 25e9, 1.0, 2.0, 1.0 / 64},
}};

}  // namespace

const GpuModel* find_gpu_model(const std::string& key) {
    for (const auto& model : kModels)
        if (key == model.key) return &model;
    // The family name alone ("h100" for "h100-sxm"), as tbdprof --help and people write it.
    for (const auto& model : kModels) {
        const std::string full = model.key;
        if (full.size() > key.size() && full.compare(0, key.size(), key) == 0 && full[key.size()] == '-')
            return &model;
    }
    return nullptr;
}

const GpuModel& default_gpu_model() { return kModels[0]; }

std::string known_gpu_model_keys() {
    std::string keys;
    for (const auto& model : kModels) {
        if (!keys.empty()) keys += ", ";
        keys += model.key;
    }
    return keys;
}

}  // namespace simgpu
