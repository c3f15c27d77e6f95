// libcurand.so.10 of the simulated GPU: host and device generators of every type, pseudorandom and
// quasirandom (Sobol' 32/64, plain and scrambled, with dimensions), with seeds, offsets and
// orderings; uniform, normal, log-normal, Poisson, binomial and raw 32/64-bit generation, and the
// discrete Poisson distribution for the device API. Pseudorandom values come from Philox4x32-10
// (philox.h) whatever the type, quasirandom ones from our Sobol' direction numbers (sobol.h): both
// differ from NVIDIA's sequences but are reproducible from seed and offset, and the offset advances by
// what each call generated (points per dimension for quasirandom generators), as cuRAND's does. Device
// generators write the result into the (host-backed) device memory at the call and launch one kernel
// on their stream, timed as a roofline of its FLOPs and the bytes it writes; host generators just
// compute.
#include <curand.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <new>
#include <type_traits>

#include "aux_kernels.h"
#include "philox.h"
#include "sobol.h"

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct curandGenerator_st {
    bool host = false;
    curandRngType_t type = CURAND_RNG_PSEUDO_DEFAULT;
    unsigned long long seed = 0;
    unsigned long long offset = 0;
    curandOrdering_t ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
    cudaStream_t stream = nullptr;
    unsigned dimensions = 1;  // quasirandom generators
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

bool quasi(curandRngType_t type) {
    return type == CURAND_RNG_QUASI_SOBOL32 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 ||
           type == CURAND_RNG_QUASI_SOBOL64 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64;
}
bool quasi64(curandRngType_t type) {
    return type == CURAND_RNG_QUASI_SOBOL64 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64;
}
bool scrambled(curandRngType_t type) {
    return type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64;
}

curandStatus_t create(curandGenerator_t* generator, curandRngType_t type, bool host) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (type == CURAND_RNG_QUASI_DEFAULT) type = CURAND_RNG_QUASI_SOBOL32;  // as documented
    if (!pseudo(type) && !quasi(type)) return CURAND_STATUS_TYPE_ERROR;
    auto* created = new (std::nothrow) curandGenerator_st;
    if (created == nullptr) return CURAND_STATUS_ALLOCATION_FAILED;
    created->host = host;
    created->type = type;
    if (quasi(type)) created->ordering = CURAND_ORDERING_QUASI_DEFAULT;
    *generator = created;
    return CURAND_STATUS_SUCCESS;
}

// (0, 1]: cuRAND's uniform range (excludes 0, includes 1).
double uniform_of(uint32_t bits) {
    return (static_cast<double>(bits) + 1.0) * 0x1p-32;
}

// The raw bits of element i of a call that generates `count` values. Quasirandom results are
// ordered by dimension (CURAND_ORDERING_QUASI_DEFAULT): count / dimensions points of dimension 0,
// then of dimension 1...; the offset skips points in every dimension.
uint64_t raw_at(const curandGenerator_st& g, uint64_t i, uint64_t count) {
    if (!quasi(g.type)) return philox_value(g.seed, g.offset + i);
    const uint64_t per_dimension = count / g.dimensions;
    const uint64_t dimension = i / per_dimension, point = g.offset + i % per_dimension;
    if (quasi64(g.type)) {
        const uint64_t value = tbdsim::rand::sobol_point64(
            tbdsim::rand::sobol_directions64(scrambled(g.type)) + dimension * 64, point);
        return scrambled(g.type) ? value ^ tbdsim::rand::sobol_scramble64()[dimension] : value;
    }
    const uint32_t value = tbdsim::rand::sobol_point32(
        tbdsim::rand::sobol_directions32(scrambled(g.type)) + dimension * 32, point);
    return scrambled(g.type) ? value ^ tbdsim::rand::sobol_scramble32()[dimension] : value;
}

// A uniform in (0, 1] from element i's bits (64-bit Sobol': its top 53 bits).
double uniform_at(const curandGenerator_st& g, uint64_t i, uint64_t count) {
    const uint64_t bits = raw_at(g, i, count);
    return quasi64(g.type) ? (static_cast<double>(bits >> 11) + 1.0) * 0x1p-53
                           : uniform_of(static_cast<uint32_t>(bits));
}

// The standard normal quantile of u in (0, 1]: quasirandom normals use the inverse CDF (a pair
// transform would break the points' structure). Newton's method on erfc, from the tail estimate.
double normal_quantile(double u) {
    if (u >= 1.0) u = std::nextafter(1.0, 0.0);
    const double tail = std::min(u, 1.0 - u);
    double z = std::sqrt(-2.0 * std::log(tail));
    z = u < 0.5 ? -z : z;
    for (int step = 0; step < 30; ++step) {
        const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
        const double density = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
        if (density < 1e-300) break;
        const double delta = (cdf - u) / density;
        z -= delta;
        if (std::abs(delta) < 1e-12) break;
    }
    return z;
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

// The smallest k with P(X <= k) >= u, walking the probabilities from P(X = 0) by their ratio
// p(k + 1) / p(k); `limit` bounds the walk.
template <typename Ratio>
uint32_t discrete_quantile(double u, double p0, Ratio&& ratio, uint32_t limit) {
    double probability = p0, cumulative = p0;
    uint32_t k = 0;
    while (cumulative < u && k < limit) {
        probability *= ratio(k);
        cumulative += probability;
        ++k;
    }
    return k;
}

uint32_t poisson_quantile(double u, double lambda) {
    if (lambda > 64) return static_cast<uint32_t>(std::max(0.0, std::round(lambda + std::sqrt(lambda) *
                                                                                  normal_quantile(u))));
    return discrete_quantile(u, std::exp(-lambda), [&](uint32_t k) { return lambda / (k + 1); }, 1u << 20);
}

// Binomial(n, p) by its quantile; the normal approximation where n p (1 - p) is large.
uint32_t binomial_quantile(double u, unsigned n, double p) {
    if (p <= 0) return 0;
    if (p >= 1) return n;
    const double variance = n * p * (1 - p);
    if (variance > 1000) {
        const double value = std::round(n * p + std::sqrt(variance) * normal_quantile(u));
        return static_cast<uint32_t>(std::clamp(value, 0.0, static_cast<double>(n)));
    }
    const double odds = p / (1 - p);
    return discrete_quantile(u, std::pow(1 - p, n), [&](uint32_t k) { return odds * (n - k) / (k + 1.0); }, n);
}

// Fills `count` elements with value(i), then (device generators) launches the kernel, timed by the
// bytes written and `flops_per` FLOPs per element, and advances the offset.
template <typename T, typename Value>
curandStatus_t generate(curandGenerator_t g, T* out, size_t count, tbdsim::aux::Kernel kernel, double flops_per,
                        Value&& value) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (quasi(g->type) && count % g->dimensions != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    if (out == nullptr && count > 0) return CURAND_STATUS_LAUNCH_FAILURE;
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(value(i));
    if (!g->host && count > 0) {
        if (quasi(g->type)) kernel = quasi64(g->type) ? tbdsim::aux::kSobol64 : tbdsim::aux::kSobol32;
        TbdsimAuxParams params{nullptr, out, static_cast<long long>(count), g->seed, g->offset, 0};
        const double bytes = static_cast<double>(count) * sizeof(T);
        if (tbdsim::aux::launch(kernel, reinterpret_cast<CUstream>(g->stream), static_cast<int64_t>(count), params,
                                flops_per * static_cast<double>(count),
                                std::is_same_v<T, double> ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32,
                                bytes) != CUDA_SUCCESS) {
            return CURAND_STATUS_LAUNCH_FAILURE;
        }
    }
    g->offset += quasi(g->type) ? count / g->dimensions : count;
    return CURAND_STATUS_SUCCESS;
}

bool valid_method(curandMethod_t method) {
    return method >= CURAND_CHOOSE_BEST && method <= CURAND_POISSON;
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
    if (quasi(g->type)) return CURAND_STATUS_TYPE_ERROR;
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
    const bool valid = quasi(g->type) ? ordering == CURAND_ORDERING_QUASI_DEFAULT
                                      : ordering >= CURAND_ORDERING_PSEUDO_BEST &&
                                            ordering <= CURAND_ORDERING_PSEUDO_DYNAMIC;
    if (!valid) return CURAND_STATUS_OUT_OF_RANGE;
    g->ordering = ordering;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t g, unsigned int dimensions) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!quasi(g->type)) return CURAND_STATUS_TYPE_ERROR;
    if (dimensions < 1 || dimensions > tbdsim::rand::kMaxSobolDimensions) return CURAND_STATUS_OUT_OF_RANGE;
    g->dimensions = dimensions;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandGenerateSeeds(curandGenerator_t g) {
    return g == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;  // nothing to precompute
}

TBD_EXPORT curandStatus_t curandGenerate(curandGenerator_t g, unsigned int* out, size_t n) {
    if (g != nullptr && quasi64(g->type)) return CURAND_STATUS_TYPE_ERROR;  // 64-bit results: GenerateLongLong
    return generate(g, out, n, tbdsim::aux::kRandomBits, 0,
                    [&](size_t i) { return static_cast<uint32_t>(raw_at(*g, i, n)); });
}

TBD_EXPORT curandStatus_t curandGenerateLongLong(curandGenerator_t g, unsigned long long* out, size_t n) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!quasi64(g->type)) return CURAND_STATUS_TYPE_ERROR;  // documented for 64-bit quasirandom generators only
    return generate(g, out, n, tbdsim::aux::kRandomBits, 0, [&](size_t i) { return raw_at(*g, i, n); });
}

// FLOPs per element: uniform 2 (convert, scale), normal 10 and log-normal 11 (the transcendental
// functions counted as one each), Poisson and binomial none (integer results).
TBD_EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float* out, size_t n) {
    return generate(g, out, n, tbdsim::aux::kRandomUniform, 2, [&](size_t i) { return uniform_at(*g, i, n); });
}

TBD_EXPORT curandStatus_t curandGenerateUniformDouble(curandGenerator_t g, double* out, size_t n) {
    return generate(g, out, n, tbdsim::aux::kRandomUniform, 2, [&](size_t i) { return uniform_at(*g, i, n); });
}

template <typename T>
curandStatus_t normal(curandGenerator_t g, T* out, size_t n, double mean, double stddev, bool log) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    // Pseudorandom normals come in pairs (Box-Muller); quasirandom ones, one per point.
    if (!quasi(g->type) && n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    return generate(g, out, n, log ? tbdsim::aux::kRandomLogNormal : tbdsim::aux::kRandomNormal, log ? 11 : 10,
                    [&](size_t i) {
                        const double z = quasi(g->type) ? normal_quantile(uniform_at(*g, i, n)) : normal_at(*g, i);
                        const double value = mean + stddev * z;
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

// Every documented method draws from the same distribution; the simulator computes them alike.
TBD_EXPORT curandStatus_t curandGeneratePoissonMethod(curandGenerator_t g, unsigned int* out, size_t n, double lambda,
                                                      curandMethod_t method) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!(lambda > 0) || lambda > 400000 || !valid_method(method)) return CURAND_STATUS_OUT_OF_RANGE;
    return generate(g, out, n, tbdsim::aux::kRandomPoisson, 0, [&](size_t i) {
        return quasi(g->type) ? poisson_quantile(uniform_at(*g, i, n), lambda) : poisson_at(*g, i, lambda);
    });
}

TBD_EXPORT curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned int* out, size_t n, double lambda) {
    return curandGeneratePoissonMethod(g, out, n, lambda, CURAND_POISSON);
}

TBD_EXPORT curandStatus_t curandGenerateBinomialMethod(curandGenerator_t g, unsigned int* out, size_t num,
                                                       unsigned int n, double p, curandMethod_t method) {
    if (g == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!(p >= 0 && p <= 1) || !valid_method(method)) return CURAND_STATUS_OUT_OF_RANGE;
    return generate(g, out, num, tbdsim::aux::kRandomBinomial, 0,
                    [&](size_t i) { return binomial_quantile(uniform_at(*g, i, num), n, p); });
}

TBD_EXPORT curandStatus_t curandGenerateBinomial(curandGenerator_t g, unsigned int* out, size_t num, unsigned int n,
                                                 double p) {
    return curandGenerateBinomialMethod(g, out, num, n, p, CURAND_CHOOSE_BEST);
}
