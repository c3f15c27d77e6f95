// Which simulated GEMM kernel runs a problem, and with which launch shape. Real cuBLAS chooses among
// hundreds of kernels by heuristics; we keep a small catalog keyed by precision, epilogue,
// transposes and a small-problem threshold, enough for names and grid sizes to look and scale like
// the real thing. Shared by the simulated cuBLAS and cuBLASLt (one embedded fatbin).
#pragma once

#include <cuda.h>
#include <simgpu/private_api.h>

#include <array>
#include <cstdint>

namespace tbdsim::blas {

struct DriverEntryPoints;

enum class KernelFamily : int {
    Fp32Simt = 0,    // sm90 FFMA kernels, 128x128 tiles
    Fp32Small,       // ampere_sgemm sliced kernels, 32x32 tiles, for small problems
    Tf32,
    Fp16,
    Bf16,
    Fp64,
    Count,
};

// What a kernel does to the product before storing it (cuBLASLt epilogues; cuBLAS uses None).
enum class Epilogue : int {
    None = 0,
    Relu,
    Bias,
    ReluBias,
    ReluAux,      // also stores the ReLU bit-mask (the aux output)
    ReluAuxBias,
    Gelu,
    GeluAux,      // also stores the GELU input (the aux output)
    GeluBias,
    GeluAuxBias,
    DRelu,        // backward: gradient times the ReLU mask read from aux
    DReluBgrad,   // ... and the bias gradient (column sums)
    DGelu,
    DGeluBgrad,
    BgradA,       // bias gradient of A's rows / B's columns
    BgradB,
    Count,
};

inline constexpr int kTransposeCombinations = 4;  // nn, nt, tn, tt
inline constexpr int kEpilogues = static_cast<int>(Epilogue::Count);

struct KernelShape {
    int tile_m;
    int tile_n;
    int threads_per_block;
};

// One CUfunction per family, epilogue and transpose combination, filled when the module is loaded.
using KernelTable = std::array<std::array<std::array<CUfunction, kTransposeCombinations>, kEpilogues>,
                               static_cast<int>(KernelFamily::Count)>;

// Symbol name in kernels.fatbin of a family's kernel for op(A) and op(B) (true = transposed).
const char* kernel_name(KernelFamily family, Epilogue epilogue, int transpose_combination);
KernelShape kernel_shape(KernelFamily family);
int transpose_combination(bool transpose_a, bool transpose_b);

// The family for a problem computed at the given precision. Small FP32 problems use the small kernels.
KernelFamily choose_family(TbdsimPrecision precision, int64_t m, int64_t n, int64_t k);

// Loads the embedded fatbin into the current context and looks every kernel up.
CUresult load_kernels(const DriverEntryPoints& driver, CUmodule* module, KernelTable* table);

}  // namespace tbdsim::blas
