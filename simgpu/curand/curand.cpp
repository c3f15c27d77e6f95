// libcurand.so.10 of the simulated GPU: host and device generators of every pseudorandom type, with
// seeds, offsets and orderings; uniform, normal, log-normal, Poisson and raw 32-bit generation. Values
// come from Philox4x32-10 (philox.h) whatever the type (so they differ from NVIDIA's sequences but are
// reproducible from seed and offset, and the offset advances by what each call generated, as
// cuRAND's does). Device generators write the result into the (host-backed) device memory at the call
// and launch one kernel on their stream for the timeline; host generators just compute. Quasirandom
// (Sobol) generators are not modelled: creating one returns CURAND_STATUS_TYPE_ERROR.
#include <curand.h>

#include <cmath>
#include <cstdint>
#include <new>

#include "aux_kernels.h"
#include "philox.h"

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct curandGenerator_st {
    bool host = false;
    curandRngType_t type = CURAND_RNG_PSEUDO_DEFAULT;
    unsigned long long seed = 0;
    unsigned long long offset = 0;
    curandOrdering_t ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
    cudaStream_t stream = nullptr;
};

namespace {

using tbdsim::rand::philox_value;

bool pseudo(curandRngType_t type) {
    switch (type) {
        case CURAND_RNG_PSEUDO_DEFAULT:
        case CURAND_RNG_PSEUDO_XORWOW:
        case CURAND_RNG_PSEUDO_MRG32K3A:
        case CURAND_RNG_PSEUDO_MTGP32:
        case CURAND_RNG_PSEUDO_MT19937:
        case CURAND_RNG_PSEUDO_PHILOX4_32_10:
            return true;
        default:
            return false;
    }
}

curandStatus_t create(curandGenerator_t* generator, curandRngType_t type, bool host) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!pseudo(type)) return CURAND_STATUS_TYPE_ERROR;
    auto* created = new (std::nothrow) curandGenerator_st;
    if (created == nullptr) return CURAND_STATUS_ALLOCATION_FAILED;
    created->host = host;
    created->type = type;
    *generator = created;
    return CURAND_STATUS_SUCCESS;
}

// (0, 1]: cuRAND's uniform range (excludes 0, includes 1).
double uniform_of(uint32_t bits) {
    return (static_cast<double>(bits) + 1.0) * 0x1p-32;
}

// Box-Muller on the pair (2j, 2j+1) of the sequence: element i's value depends only on i.
double normal_at(const curandGenerator_st& g, uint64_t i) {
    const uint64_t pair = (g.offset + i) & ~uint64_t{1};
    const double u1 = uniform_of(philox_value(g.seed, pair));
    const double u2 = uniform_of(philox_value(g.seed, pair + 1));
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * M_PI * u2;
    return ((g.offset + i) & 1) == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
}

uint32_t poisson_at(const curandGenerator_st& g, uint64_t i, double lambda) {
    if (lambda > 64) {  // normal approximation, as large-lambda Poisson generators do
        const double value = std::round(lambda + std::sqrt(lambda) * normal_at(g, i));
        return value < 0 ? 0u : static_cast<uint32_t>(value);
    }
    // Knuth's product of uniforms, each draw from its own sub-sequence of the element's index.
    const double limit = std::exp(-lambda);
    double product = 1;
    uint32_t count = 0;
    for (uint64_t draw = 0;; ++draw) {
        product *= uniform_of(philox_value(g.seed ^ (draw * 0x9E3779B97F4A7C15ull), g.offset + i));
        if (product <= limit) return count;
        ++count;
    }
}

// Fills `count` elements with value(i), then (device generators) launches the kernel and advances
// the offset.
template <typename T, typename Value>
curandStatus_t generate(curandGenerator_t g, T* out, size_t count, tbdsim::aux::Kernel kernel, double flops_per,
                        Value&& value) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (out == nullptr && count > 0) return CURAND_STATUS_LAUNCH_FAILURE;
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(value(i));
    if (!g->host && count > 0) {
        TbdsimAuxParams params{nullptr, out, static_cast<long long>(count), g->seed, g->offset, 0};
        if (tbdsim::aux::launch(kernel, reinterpret_cast<CUstream>(g->stream), static_cast<int64_t>(count), params,
                                flops_per * static_cast<double>(count)) != CUDA_SUCCESS) {
            return CURAND_STATUS_LAUNCH_FAILURE;
        }
    }
    g->offset += count;
    return CURAND_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t type) {
    return create(generator, type, false);
}

TBD_EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t type) {
    return create(generator, type, true);
}

TBD_EXPORT curandStatus_t curandDestroyGenerator(curandGenerator_t generator) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    delete generator;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandGetVersion(int* version) {
    if (version == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandGetProperty(libraryPropertyType type, int* value) {
    if (value == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    switch (type) {
        case MAJOR_VERSION:
            *value = CURAND_VER_MAJOR;
            return CURAND_STATUS_SUCCESS;
        case MINOR_VERSION:
            *value = CURAND_VER_MINOR;
            return CURAND_STATUS_SUCCESS;
        case PATCH_LEVEL:
            *value = CURAND_VER_PATCH;
            return CURAND_STATUS_SUCCESS;
        default:
            return CURAND_STATUS_OUT_OF_RANGE;
    }
}

TBD_EXPORT curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t stream) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    g->stream = stream;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long seed) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    g->seed = seed;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long offset) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    g->offset = offset;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t ordering) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (ordering < CURAND_ORDERING_PSEUDO_BEST || ordering > CURAND_ORDERING_PSEUDO_DYNAMIC) {
        return CURAND_STATUS_OUT_OF_RANGE;
    }
    g->ordering = ordering;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t g, unsigned int) {
    return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_TYPE_ERROR;  // no quasi generators
}

TBD_EXPORT curandStatus_t curandGenerateSeeds(curandGenerator_t g) {
    return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;  // nothing to precompute
}

TBD_EXPORT curandStatus_t curandGenerate(curandGenerator_t g, unsigned int* out, size_t n) {
    return generate(g, out, n, tbdsim::aux::kRandomBits, 0,
                    [&](size_t i) { return philox_value(g->seed, g->offset + i); });
}

TBD_EXPORT curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long*, size_t) {
    return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_TYPE_ERROR;  // 64-bit quasi generators only
}

// FLOPs per element (the annotation): uniform 2 (convert, scale), normal 10 and log-normal 11 (the
// transcendental functions counted as one each), Poisson none (integer result).
TBD_EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float* out, size_t n) {
    return generate(g, out, n, tbdsim::aux::kRandomUniform, 2,
                    [&](size_t i) { return uniform_of(philox_value(g->seed, g->offset + i)); });
}

TBD_EXPORT curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n) {
    return generate(g, out, n, tbdsim::aux::kRandomUniform, 2,
                    [&](size_t i) { return uniform_of(philox_value(g->seed, g->offset + i)); });
}

template <typename T>
curandStatus_t normal(curandGenerator_t g, T* out, size_t n, double mean, double stddev, bool log) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;  // pseudorandom normals come in pairs
    return generate(g, out, n, log ? tbdsim::aux::kRandomLogNormal : tbdsim::aux::kRandomNormal, log ? 11 : 10,
                    [&](size_t i) {
                        const double value = mean + stddev * normal_at(*g, i);
                        return log ? std::exp(value) : value;
                    });
}

TBD_EXPORT curandStatus_t curandGenerateNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev) {
    return normal(g, out, n, mean, stddev, false);
}
TBD_EXPORT curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double* out, size_t n, double mean,
                                                     double stddev) {
    return normal(g, out, n, mean, stddev, false);
}
TBD_EXPORT curandStatus_t curandGenerateLogNormal(curandGenerator_t g, float* out, size_t n, float mean, float stddev) {
    return normal(g, out, n, mean, stddev, true);
}
TBD_EXPORT curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t g, double* out, size_t n, double mean,
                                                        double stddev) {
    return normal(g, out, n, mean, stddev, true);
}

TBD_EXPORT curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned int* out, size_t n, double lambda) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!(lambda > 0)) return CURAND_STATUS_OUT_OF_RANGE;
    return generate(g, out, n, tbdsim::aux::kRandomPoisson, 0, [&](size_t i) { return poisson_at(*g, i, lambda); });
}
