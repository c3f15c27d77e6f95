// The hardware a simulated device pretends to be. One table entry per model; TBDSIM_MODEL picks one.
#pragma once

#include <cstdint>
#include <string>

namespace tbdsim::driver {

struct GpuModel {
    const char* key;             // value of TBDSIM_MODEL
    const char* name;            // what cuDeviceGetName reports
    int cc_major;
    int cc_minor;
    int sm_count;
    int fp32_lanes_per_sm;       // FP32 FMA units per SM
    int clock_khz;               // SM boost clock
    int memory_clock_khz;
    int memory_bus_width_bits;
    uint64_t memory_bytes;       // device memory capacity
    int l2_cache_bytes;
    double memory_bandwidth;     // bytes/s, device-to-device traffic
    double pcie_bandwidth;       // bytes/s, host<->device copies
    double tensor_tf32_ratio;    // dense TF32 tensor-core peak / FP32 peak
    double tensor_fp16_ratio;    // dense FP16/BF16 tensor-core peak / FP32 peak
    double fp64_ratio;           // FP64 peak / FP32 peak

    // 2 FLOPs per FMA per lane per cycle.
    double fp32_peak_flops() const {
        return 2.0 * sm_count * fp32_lanes_per_sm * (clock_khz * 1000.0);
    }
};

// Known models; the first is the default (an H100 SXM5 80GB). A key without its form factor
// ("h100", "a100") names the same model as the full key.
const GpuModel* find_gpu_model(const std::string& key);
const GpuModel& default_gpu_model();
// Comma-separated keys, for error messages.
std::string known_gpu_model_keys();

}  // namespace tbdsim::driver
