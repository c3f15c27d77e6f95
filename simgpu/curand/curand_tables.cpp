// cuRAND's tables for the device API: the Sobol' direction vectors and scramble constants (host
// arrays for 20,000 dimensions, sobol.h), and the discrete Poisson distribution, allocated in device
// memory as curand_discrete.h lays it out. The simulator does not run device code, so the
// distribution records its mean and standard deviation and leaves the M2 histogram empty (null).
#include <curand.h>
#include <curand_discrete.h>

#include <cmath>

#include "driver_entry_points.h"
#include "sobol.h"

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

TBD_EXPORT curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t* vectors[],
                                                      curandDirectionVectorSet_t set) {
    if (vectors == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    if (set != CURAND_DIRECTION_VECTORS_32_JOEKUO6 && set != CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6)
        return CURAND_STATUS_OUT_OF_RANGE;
    const uint32_t* table = tbdsim::rand::sobol_directions32(set == CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6);
    *vectors = reinterpret_cast<curandDirectionVectors32_t*>(const_cast<uint32_t*>(table));
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t* vectors[],
                                                      curandDirectionVectorSet_t set) {
    if (vectors == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    if (set != CURAND_DIRECTION_VECTORS_64_JOEKUO6 && set != CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6)
        return CURAND_STATUS_OUT_OF_RANGE;
    const uint64_t* table = tbdsim::rand::sobol_directions64(set == CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6);
    *vectors = reinterpret_cast<curandDirectionVectors64_t*>(const_cast<uint64_t*>(table));
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandGetScrambleConstants32(unsigned int** constants) {
    if (constants == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    *constants = const_cast<unsigned int*>(tbdsim::rand::sobol_scramble32());
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandGetScrambleConstants64(unsigned long long** constants) {
    if (constants == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
    *constants = reinterpret_cast<unsigned long long*>(const_cast<uint64_t*>(tbdsim::rand::sobol_scramble64()));
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandCreatePoissonDistribution(double lambda,
                                                          curandDiscreteDistribution_t* discrete_distribution) {
    if (discrete_distribution == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!(lambda > 0) || lambda > 400000) return CURAND_STATUS_OUT_OF_RANGE;
    const tbdsim::blas::DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr || driver->init(0) != CUDA_SUCCESS) return CURAND_STATUS_INITIALIZATION_FAILED;
    CUdeviceptr address = 0;
    if (driver->mem_alloc(&address, sizeof(curandDiscreteDistribution_st)) != CUDA_SUCCESS)
        return CURAND_STATUS_ALLOCATION_FAILED;
    // Device memory is host memory on the simulated GPU: the fields are written in place.
    auto* distribution = reinterpret_cast<curandDiscreteDistribution_st*>(address);
    *distribution = curandDiscreteDistribution_st{};
    distribution->self_host_ptr = distribution;
    distribution->mean = lambda;
    distribution->stddev = std::sqrt(lambda);
    distribution->method = CURAND_POISSON;
    *discrete_distribution = distribution;
    return CURAND_STATUS_SUCCESS;
}

TBD_EXPORT curandStatus_t curandDestroyDistribution(curandDiscreteDistribution_t discrete_distribution) {
    if (discrete_distribution == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    const tbdsim::blas::DriverEntryPoints* driver = tbdsim::blas::driver_entry_points();
    if (driver == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    return driver->mem_free(reinterpret_cast<CUdeviceptr>(discrete_distribution)) == CUDA_SUCCESS
               ? CURAND_STATUS_SUCCESS
               : CURAND_STATUS_NOT_INITIALIZED;
}
