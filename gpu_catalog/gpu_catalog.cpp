#include "tbdprof/gpu_catalog/gpu_catalog.h"

#include <array>

namespace tbdprof::gpu_catalog {
namespace {

constexpr uint64_t GiB = 1024ull * 1024 * 1024;
constexpr int MiB = 1024 * 1024;

// More specific names first ("H100 PCIe" before "H100", "A100" before "A10", "L40S" before "L4").
// Peaks (TFLOP/s, dense): H100 SXM5 and H200 SXM FP32 66.9, TF32 494.7, FP16/BF16 989.4, FP8 1978.9,
// FP64 33.5; H100 PCIe 51.2 / 378 / 756 / 1513 / 25.6; A100 19.5 / 156 / 312 / - / 9.7; V100 FP32
// 15.7, FP16 tensor cores 125, FP64 7.8, no TF32 or BF16 tensor cores (V100S PCIe 16.4 / 130 / 8.2); RTX 4090
// FP32 82.6, TF32 and FP16 (FP32 accumulate) at 1x and 2x FP32, FP64 1/64 of FP32. Models with only a clock are there
// for the importer's FP32 peak.
constexpr std::array<GpuSpec, 13> kSpecs = {{
    {"H100 PCIe",
     nullptr,
     "NVIDIA H100 PCIe",
     9,
     0,
     114,
     1755000,
     0,
     0,
     0,
     0,
     0,
     0,
     {51.2, 378.0, 756.0, 756.0, 1513.0, 25.6}},
    {"H100",
     "h100-sxm",
     "NVIDIA H100 80GB HBM3",
     9,
     0,
     132,
     1980000,
     2619000,
     5120,
     80 * GiB,
     50 * MiB,
     3.35e12,
     50e9,
     {66.9, 494.7, 989.4, 989.4, 1978.9, 33.5}},
    {"H200",
     "h200",
     "NVIDIA H200",
     9,
     0,
     132,
     1980000,
     3201000,
     6144,
     141ull * 1000000000ull,
     60 * MiB,
     4.8e12,
     50e9,
     {66.9, 494.7, 989.4, 989.4, 1978.9, 33.5}},
    {"A100",
     "a100-sxm",
     "NVIDIA A100-SXM4-80GB",
     8,
     0,
     108,
     1410000,
     1593000,
     5120,
     80 * GiB,
     40 * MiB,
     2.039e12,
     25e9,
     {19.5, 156.0, 312.0, 312.0, 0.0, 9.7}},
    {"V100S", nullptr, "Tesla V100S-PCIE-32GB", 7, 0, 80, 1601000, 0, 0, 0, 0, 0, 0, {16.4, 0.0, 130.0, 0.0, 0.0, 8.2}},
    {"V100",
     "v100-sxm",
     "Tesla V100-SXM2-32GB",
     7,
     0,
     80,
     1530000,
     877000,
     4096,
     32 * GiB,
     6 * MiB,
     0.9e12,
     12e9,
     {15.7, 0.0, 125.0, 0.0, 0.0, 7.8}},
    {"RTX 4090",
     "rtx4090",
     "NVIDIA GeForce RTX 4090",
     8,
     9,
     128,
     2520000,
     10501000,
     384,
     24 * GiB,
     72 * MiB,
     1.008e12,
     25e9,
     {82.6, 82.6, 165.2, 165.2, 0.0, 82.6 / 64}},
    {"A10G", nullptr, "NVIDIA A10G", 8, 6, 80, 1710000, 0, 0, 0, 0, 0, 0, {}},
    {"A10", nullptr, "NVIDIA A10", 8, 6, 72, 1695000, 0, 0, 0, 0, 0, 0, {}},
    {"L40S", nullptr, "NVIDIA L40S", 8, 9, 142, 2520000, 0, 0, 0, 0, 0, 0, {}},
    {"L4", nullptr, "NVIDIA L4", 8, 9, 58, 2040000, 0, 0, 0, 0, 0, 0, {}},
    {"T4", nullptr, "Tesla T4", 7, 5, 40, 1590000, 0, 0, 0, 0, 0, 0, {}},
    {"P100", nullptr, "Tesla P100-SXM2-16GB", 6, 0, 56, 1480000, 0, 0, 0, 0, 0, 0, {}},
}};

// The simulator's offer, in kSpecs order but with its default first.
constexpr std::array<int, 5> kSimulatedIndex = {1, 2, 3, 5, 6};

}  // namespace

int fp32_lanes_per_sm(int cc_major, int cc_minor) {
    switch (cc_major) {
        case 3:
            return 192;  // Kepler
        case 5:
            return 128;  // Maxwell
        case 6:
            return cc_minor == 0 ? 64 : 128;  // P100: 64; GP10x: 128
        case 7:
            return 64;  // Volta, Turing
        case 8:
            return cc_minor == 0 ? 64 : 128;  // A100: 64; GA10x, Ada: 128
        default:
            return cc_major >= 9 ? 128 : 0;  // Hopper, Blackwell and later
    }
}

const GpuSpec* find_by_device_name(std::string_view device_name) {
    for (const GpuSpec& spec : kSpecs) {
        if (device_name.find(spec.name_part) != std::string_view::npos) return &spec;
    }
    return nullptr;
}

int simulated_count() {
    return static_cast<int>(kSimulatedIndex.size());
}

const GpuSpec& simulated_at(int index) {
    return kSpecs[kSimulatedIndex.at(index)];
}

const GpuSpec* find_simulated(std::string_view key) {
    for (int i = 0; i < simulated_count(); ++i) {
        if (key == simulated_at(i).sim_key) return &simulated_at(i);
    }
    // The family name alone ("h100" for "h100-sxm"), as tbdprof --help and people write it.
    for (int i = 0; i < simulated_count(); ++i) {
        const std::string_view full = simulated_at(i).sim_key;
        if (full.size() > key.size() && full.substr(0, key.size()) == key && full[key.size()] == '-')
            return &simulated_at(i);
    }
    return nullptr;
}

std::string simulated_keys() {
    std::string keys;
    for (int i = 0; i < simulated_count(); ++i) {
        if (!keys.empty()) keys += ", ";
        keys += simulated_at(i).sim_key;
    }
    return keys;
}

}  // namespace tbdprof::gpu_catalog
