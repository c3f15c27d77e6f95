#include "gpu_model.h"

#include <vector>

#include "tbdprof/gpu_catalog/gpu_catalog.h"

namespace tbdsim::driver {
namespace {

namespace catalog = tbdprof::gpu_catalog;

// A model's cost-model figures from the catalog's data-sheet entry. Tensor-core peaks the device
// lacks (V100's TF32) run at the FP32 rate, as the hardware runs such requests.
GpuModel from_catalog(const catalog::GpuSpec& spec) {
    const catalog::PeakTflops& peak = spec.peak_tflops;
    const auto ratio = [&](double tflops) { return tflops > 0 ? tflops / peak.fp32 : 1.0; };
    return GpuModel{spec.sim_key,
                    spec.device_name,
                    spec.cc_major,
                    spec.cc_minor,
                    spec.sm_count,
                    catalog::fp32_lanes_per_sm(spec.cc_major, spec.cc_minor),
                    spec.boost_clock_khz,
                    spec.memory_clock_khz,
                    spec.memory_bus_width_bits,
                    spec.memory_bytes,
                    spec.l2_cache_bytes,
                    spec.memory_bandwidth_bytes_per_s,
                    spec.pcie_bandwidth_bytes_per_s,
                    ratio(peak.tf32),
                    ratio(peak.fp16),
                    ratio(peak.fp64)};
}

const std::vector<GpuModel>& models() {
    static const std::vector<GpuModel> kModels = [] {
        std::vector<GpuModel> all;
        for (int i = 0; i < catalog::simulated_count(); ++i) all.push_back(from_catalog(catalog::simulated_at(i)));
        return all;
    }();
    return kModels;
}

}  // namespace

const GpuModel* find_gpu_model(const std::string& key) {
    const catalog::GpuSpec* spec = catalog::find_simulated(key);
    if (spec == nullptr) return nullptr;
    for (const GpuModel& model : models())
        if (std::string(model.key) == spec->sim_key) return &model;
    return nullptr;
}

const GpuModel& default_gpu_model() {
    return models().front();
}

std::string known_gpu_model_keys() {
    return catalog::simulated_keys();
}

}  // namespace tbdsim::driver
