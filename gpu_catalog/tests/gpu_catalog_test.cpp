// The catalog's own consistency: every model the simulated GPU offers is found by its key, its
// family name and the name its driver reports, so that the collector, the importer and the analyzer
// know every simulated device; the data sheets' FP32 peaks agree with SMs x lanes x clock.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "tbdprof/gpu_catalog/gpu_catalog.h"

namespace gc = tbdprof::gpu_catalog;

TEST_CASE("every simulated model is found by key, family name and reported device name") {
    REQUIRE(gc::simulated_count() >= 1);
    CHECK(std::string(gc::simulated_at(0).sim_key) == "h100-sxm");
    for (int i = 0; i < gc::simulated_count(); ++i) {
        const gc::GpuSpec& spec = gc::simulated_at(i);
        CAPTURE(spec.sim_key);
        CHECK(gc::find_simulated(spec.sim_key) == &spec);
        const std::string key = spec.sim_key;
        const auto dash = key.find('-');
        if (dash != std::string::npos) CHECK(gc::find_simulated(key.substr(0, dash)) == &spec);
        CHECK(gc::find_by_device_name(spec.device_name) == &spec);
        CHECK(spec.memory_bytes > 0);
        CHECK(spec.memory_bandwidth_bytes_per_s > 0);
        CHECK(spec.pcie_bandwidth_bytes_per_s > 0);
        CHECK(gc::simulated_keys().find(spec.sim_key) != std::string::npos);
    }
    CHECK(gc::find_simulated("h10") == nullptr);
    CHECK(gc::find_simulated("") == nullptr);
    CHECK(gc::find_simulated("b200") == nullptr);
}

TEST_CASE("data-sheet FP32 peaks agree with SMs x FP32 lanes x boost clock x 2") {
    for (int i = 0; i < gc::simulated_count(); ++i) {
        const gc::GpuSpec& spec = gc::simulated_at(i);
        CAPTURE(spec.sim_key);
        const double computed_tflops = 2.0 * spec.sm_count * gc::fp32_lanes_per_sm(spec.cc_major, spec.cc_minor) *
                                       spec.boost_clock_khz * 1e3 / 1e12;
        CHECK(std::abs(computed_tflops - spec.peak_tflops.fp32) / spec.peak_tflops.fp32 < 0.01);
    }
}

TEST_CASE("specific names match before their prefixes") {
    CHECK(std::string(gc::find_by_device_name("NVIDIA H100 PCIe")->name_part) == "H100 PCIe");
    CHECK(std::string(gc::find_by_device_name("NVIDIA H100 80GB HBM3")->name_part) == "H100");
    CHECK(std::string(gc::find_by_device_name("NVIDIA A100-SXM4-40GB")->name_part) == "A100");
    CHECK(std::string(gc::find_by_device_name("NVIDIA A10")->name_part) == "A10");
    CHECK(std::string(gc::find_by_device_name("NVIDIA L4")->name_part) == "L4");
    CHECK(std::string(gc::find_by_device_name("NVIDIA L40S")->name_part) == "L40S");
    CHECK(std::string(gc::find_by_device_name("Tesla V100S-PCIE-32GB")->name_part) == "V100S");
    CHECK(gc::find_by_device_name("Some Future GPU") == nullptr);
}

TEST_CASE("FP32 lanes per SM by compute capability") {
    CHECK(gc::fp32_lanes_per_sm(6, 0) == 64);
    CHECK(gc::fp32_lanes_per_sm(6, 1) == 128);
    CHECK(gc::fp32_lanes_per_sm(7, 0) == 64);
    CHECK(gc::fp32_lanes_per_sm(7, 5) == 64);
    CHECK(gc::fp32_lanes_per_sm(8, 0) == 64);
    CHECK(gc::fp32_lanes_per_sm(8, 6) == 128);
    CHECK(gc::fp32_lanes_per_sm(8, 9) == 128);
    CHECK(gc::fp32_lanes_per_sm(9, 0) == 128);
    CHECK(gc::fp32_lanes_per_sm(10, 0) == 128);
    CHECK(gc::fp32_lanes_per_sm(5, 2) == 128);
    CHECK(gc::fp32_lanes_per_sm(2, 0) == 0);
}
