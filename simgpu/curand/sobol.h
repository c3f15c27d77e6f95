// Sobol' quasirandom sequences for the simulated cuRAND: direction vectors for up to 20,000
// dimensions (32- and 64-bit, plain and scrambled sets) and scramble constants, built on first use.
// Like cuRAND's, dimension 1 is van der Corput's sequence and dimension d > 1 follows the (d-1)-th
// primitive polynomial over GF(2) in order of degree; the initial direction numbers are our own
// (odd, deterministic), not Joe and Kuo's table, so the points differ from NVIDIA's while keeping
// the Sobol' structure.
#pragma once

#include <cstdint>

namespace tbdsim::rand {

inline constexpr unsigned kMaxSobolDimensions = 20000;

// 32 (or 64) direction numbers per dimension, dimension-major; `scrambled` selects the second set.
const uint32_t* sobol_directions32(bool scrambled);
const uint64_t* sobol_directions64(bool scrambled);
// One constant per dimension, XORed into the scrambled generators' points.
const uint32_t* sobol_scramble32();
const uint64_t* sobol_scramble64();

// Point `index` (0-based) of dimension `dimension`, from that dimension's direction numbers.
uint32_t sobol_point32(const uint32_t* directions, uint64_t index);
uint64_t sobol_point64(const uint64_t* directions, uint64_t index);

}  // namespace tbdsim::rand
