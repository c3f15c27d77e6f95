// The simulated cuDNN's kernels (kernels.cu) and the one launcher every operation goes through: it
// tells the cost model the FLOPs (docs/simgpu-cudnn.md lists how each operation is counted) and
// launches on the handle's stream, as the simulated cuBLAS does (simgpu/blas_common).
#pragma once

#include <cuda.h>
#include <simgpu/private_api.h>

#include <array>
#include <cstdint>

#include "dnn_params.h"

namespace tbdsim::blas {
struct DriverEntryPoints;
}

namespace tbdsim::dnn {

enum TbdsimDnnKernel : int {
    kConvFwdImplicit = 0,
    kConvFwdPrecomp,
    kConvFwdGemm,
    kConvBwdData0,
    kConvBwdData1,
    kConvBwdFilter0,
    kConvBwdFilter1,
    kConvFwdTf32,
    kConvBwdDataTf32,
    kConvBwdFilterTf32,
    kBiasGrad,
    kBatchNormTrain,
    kBatchNormInference,
    kBatchNormBackward,
    kPoolingForward,
    kPoolingBackwardMax,
    kPoolingBackwardAvg,
    kActivationForward,
    kActivationBackward,
    kSoftmaxForward,
    kSoftmaxBackward,
    kAddTensor,
    kSetTensor,
    kScaleTensor,
    kMatmulFp32,
    kMatmulTf32,
    kPointwise,
    kOpTensor,
    kReduceTensor,
    kDropoutInit,
    kDropoutForward,
    kDropoutBackward,
    kBatchNormTrainEx,
    kBatchNormBackwardEx,
    kTransformTensor,
    kRnnForward,
    kRnnBackwardData,
    kRnnBackwardWeights,
    kLrnForward,
    kLrnBackward,
    kDivisiveNormForward,
    kDivisiveNormBackward,
    kCtcLoss,
    kMhaForward,
    kMhaBackwardData,
    kMhaBackwardWeights,
    kFusedConvBnStats,
    kFusedWgrad,
    kFusedBnFinalize,
    kIm2Col,
    kReorderFilterBias,
    kSpatialTfGridForward,
    kSpatialTfGridBackward,
    kSpatialTfSamplerForward,
    kSpatialTfSamplerBackward,
    kSdpaForward,
    kSdpaBackward,
    kKernelCount,
};

using KernelTable = std::array<CUfunction, kKernelCount>;

const char* kernel_name(int kernel);

// Loads the embedded fatbin into the current context and looks every kernel up.
CUresult load_kernels(const blas::DriverEntryPoints& driver, CUmodule* module, KernelTable* table);

struct Launch {
    int kernel = kConvFwdImplicit;
    unsigned grid_x = 1, grid_y = 1, grid_z = 1;
    unsigned threads = 256;
    double flops = 0;  // 0 (and bytes 0): the cost model times it by its launch shape
    double bytes = 0;  // > 0: device-memory traffic, the duration is a roofline (docs/simgpu-cudnn.md)
    TbdsimPrecision precision = TBDSIM_PRECISION_FP32;
    TbdsimDnnParams params{};
};

// Blocks of `threads` to cover `elements`, each thread doing `per_thread` (at least one block).
unsigned blocks_for(int64_t elements, unsigned threads, unsigned per_thread = 4);

CUresult launch(const blas::DriverEntryPoints& driver, const KernelTable& kernels, CUstream stream,
                const Launch& launch);

}  // namespace tbdsim::dnn
