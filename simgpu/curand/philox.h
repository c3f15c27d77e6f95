// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator, so element i of a sequence is computed directly from (seed, i). The
// simulated cuRAND draws every pseudorandom type from it; the values are not NVIDIA's sequences.
#pragma once

#include <array>
#include <cstdint>

namespace tbdsim::rand {

inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
    constexpr uint32_t kMultiplier0 = 0xD2511F53, kMultiplier1 = 0xCD9E8D57;
    constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
    for (int round = 0; round < 10; ++round) {
        const uint64_t product0 = static_cast<uint64_t>(kMultiplier0) * counter[0];
        const uint64_t product1 = static_cast<uint64_t>(kMultiplier1) * counter[2];
        counter = {static_cast<uint32_t>(product1 >> 32) ^ counter[1] ^ key[0], static_cast<uint32_t>(product1),
                   static_cast<uint32_t>(product0 >> 32) ^ counter[3] ^ key[1], static_cast<uint32_t>(product0)};
        key[0] += kWeyl0;
        key[1] += kWeyl1;
    }
    return counter;
}

// The index-th 32-bit value of the sequence of `seed`.
inline uint32_t philox_value(uint64_t seed, uint64_t index) {
    const uint64_t block = index / 4;
    const auto out = philox4x32_10({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
                                   {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
    return out[index % 4];
}

}  // namespace tbdsim::rand
