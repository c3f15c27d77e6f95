// Launching the simulated cuRAND/cuFFT/cuSPARSE kernels: the module is loaded into the context
// current at the first launch (one per process; these libraries bind no context of their own), and
// each launch is annotated with its FLOPs, as the simulated cuBLAS does, through blas_common's driver
// entry points. A launch failure is the caller's to report in its own status type.
#pragma once

#include <cuda.h>
#include <simgpu/private_api.h>

#include <cstdint>

#include "aux_params.h"

namespace tbdsim::aux {

enum Kernel : int {
    kRandomBits = 0,
    kRandomUniform,
    kRandomNormal,
    kRandomLogNormal,
    kRandomPoisson,
    kFftC2C,
    kFftR2C,
    kFftC2R,
    kSpmmCsr,
    kSpmvCsr,
    kRandomBinomial,
    kSobol32,
    kSobol64,
    kKernelCount,
};

// Launches `kernel` over `elements` on `stream`; flops > 0 annotates it (FP32 unless `precision`);
// bytes > 0 (what it moves to and from device memory) makes its duration a roofline.
CUresult launch(Kernel kernel, CUstream stream, int64_t elements, const TbdsimAuxParams& params, double flops,
                TbdsimPrecision precision = TBDSIM_PRECISION_FP32, double bytes = 0);

}  // namespace tbdsim::aux
