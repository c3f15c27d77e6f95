// Device code of the simulated cuRAND, cuFFT and cuSPARSE: empty bodies (the simulated driver times
// kernels, it does not run them; these libraries compute their results on the host, into the
// host-backed device memory, when called). One argument, a TbdsimAuxParams. Names in
// aux_kernels.cpp's order.
#include "aux_params.h"

#define TBDSIM_AUX_KERNEL(name) \
    extern "C" __global__ void name(TbdsimAuxParams) {}

TBDSIM_AUX_KERNEL(gen_sequenced_philox4_32_10_bits)
TBDSIM_AUX_KERNEL(gen_sequenced_philox4_32_10_uniform)
TBDSIM_AUX_KERNEL(gen_sequenced_philox4_32_10_normal)
TBDSIM_AUX_KERNEL(gen_sequenced_philox4_32_10_lognormal)
TBDSIM_AUX_KERNEL(gen_sequenced_philox4_32_10_poisson)
TBDSIM_AUX_KERNEL(regular_fft_c2c)
TBDSIM_AUX_KERNEL(regular_fft_r2c)
TBDSIM_AUX_KERNEL(regular_fft_c2r)
TBDSIM_AUX_KERNEL(csrmm_alg1_kernel)
TBDSIM_AUX_KERNEL(csrmv_v3_kernel)
TBDSIM_AUX_KERNEL(gen_sequenced_philox4_32_10_binomial)
TBDSIM_AUX_KERNEL(sobol32_generate_kernel)
TBDSIM_AUX_KERNEL(sobol64_generate_kernel)
