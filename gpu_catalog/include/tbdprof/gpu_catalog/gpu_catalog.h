// The one table of GPU facts that every stage reads: the collector (FP32 lanes per SM), the importer
// (clocks and lanes that Kineto's deviceProperties leave out), the analyzer (peaks per precision) and
// the simulated GPU's device models (which models it offers, and their figures).
// Stage 0. Depends on: nothing.
//
// Figures are NVIDIA's public data-sheet values: boost clocks, SM counts, memory, and dense (no
// sparsity) peak throughput per precision. 0 means not known or not supported by the device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tbdprof::gpu_catalog {

struct PeakTflops {
    double fp32 = 0;
    double tf32 = 0;  // tensor cores
    double fp16 = 0;  // tensor cores, FP32 accumulate
    double bf16 = 0;
    double fp8 = 0;
    double fp64 = 0;  // vector units
};

struct GpuSpec {
    const char* name_part;    // matched as a substring of the driver's device name; first match wins
    const char* sim_key;      // the simulated GPU's TBDSIM_MODEL key for this model; nullptr if not offered
    const char* device_name;  // what cuDeviceGetName reports for it
    int cc_major = 0;
    int cc_minor = 0;
    int sm_count = 0;
    int boost_clock_khz = 0;  // SM clock
    int memory_clock_khz = 0;
    int memory_bus_width_bits = 0;
    uint64_t memory_bytes = 0;
    int l2_cache_bytes = 0;
    double memory_bandwidth_bytes_per_s = 0;  // device memory
    double pcie_bandwidth_bytes_per_s = 0;    // effective pinned host<->device copy rate, not the link's nominal one
    PeakTflops peak_tflops;
};

// FP32 FMA lanes per SM for a compute capability (CUDA C++ Programming Guide, "Arithmetic
// Instructions" throughput table); 0 for an unknown architecture.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

// By the device's name as the driver reports it ("NVIDIA H100 80GB HBM3"); nullptr when unknown.
const GpuSpec* find_by_device_name(std::string_view device_name);

// The models the simulated GPU offers, in order; the first is its default (an H100 SXM5 80GB).
// A key without its form factor ("h100" for "h100-sxm") names the same model.
const GpuSpec* find_simulated(std::string_view key);
int simulated_count();
const GpuSpec& simulated_at(int index);
// Comma-separated keys, for messages.
std::string simulated_keys();

}  // namespace tbdprof::gpu_catalog
