#include "device_catalog.h"

namespace tbdprof::interop {

int64_t fp32_lanes_per_sm(int64_t cc_major, int64_t cc_minor) {
    if (cc_major == 6) return cc_minor == 0 ? 64 : 128;       // P100: 64; GP10x: 128
    if (cc_major == 7) return 64;                             // Volta, Turing
    if (cc_major == 8) return cc_minor == 0 ? 64 : 128;       // A100: 64; GA10x, Ada: 128
    if (cc_major >= 9) return 128;                            // Hopper, Blackwell
    if (cc_major == 5) return 128;                            // Maxwell
    return 0;
}

int64_t boost_clock_khz(std::string_view name) {
    struct Model {
        std::string_view name_part;
        int64_t khz;
    };
    // Order matters: more specific names first.
    static constexpr Model kModels[] = {
        {"V100S", 1601000},   {"V100", 1530000},     {"A100", 1410000},   {"H100 PCIe", 1755000},
        {"H100", 1980000},    {"H200", 1980000},     {"A10G", 1710000},   {"A10", 1695000},
        {"L40S", 2520000},    {"L4", 2040000},     {"T4", 1590000},     {"P100", 1480000},
    };
    for (const Model& model : kModels) {
        if (name.find(model.name_part) != std::string_view::npos) return model.khz;
    }
    return 0;
}

}  // namespace tbdprof::interop
