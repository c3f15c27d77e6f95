#include "kernel_catalog.h"

#include <cstddef>
#include <string>

#include "driver_entry_points.h"

// Generated at build time from kernels.fatbin by embed_file.cmake.
extern "C" const unsigned char tbdsim_blas_fatbin[];
extern "C" const std::size_t tbdsim_blas_fatbin_size;

namespace tbdsim::blas {
namespace {

struct FamilyDescription {
    const char* prefix;  // before the transpose letters
    const char* suffix;  // after them ("" when the name ends with them)
    KernelShape shape;
};

// Kept in KernelFamily order; the names must match kernels.cu.
constexpr FamilyDescription kFamilies[] = {
    {"sm90_xmma_gemm_f32f32_f32f32_f32_",
     "_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", {128, 128, 256}},
    {"ampere_sgemm_32x32_sliced1x4_", "", {32, 32, 128}},
    {"sm90_xmma_gemm_f32f32_tf32f32_f32_",
     "_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", {128, 128, 256}},
    {"sm90_xmma_gemm_f16f16_f16f32_f32_",
     "_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", {128, 256, 256}},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_",
     "_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", {128, 256, 256}},
    {"sm90_xmma_gemm_f64f64_f64f64_f64_",
     "_n_tilesize64x64x16_stage4_warpsize2x2x1_dmma_execute_kernel__5x_cublas", {64, 64, 256}},
};
static_assert(std::size(kFamilies) == static_cast<std::size_t>(KernelFamily::Count));

constexpr const char* kTransposeLetters[kTransposeCombinations] = {"nn", "nt", "tn", "tt"};
// Kept in Epilogue order; appended to the name (kernels.cu).
constexpr const char* kEpilogueTags[kEpilogues] = {
    "", "_epilogue_relu", "_epilogue_bias", "_epilogue_bias_relu", "_epilogue_relu_aux", "_epilogue_bias_relu_aux",
    "_epilogue_gelu", "_epilogue_gelu_aux", "_epilogue_bias_gelu", "_epilogue_bias_gelu_aux", "_epilogue_drelu",
    "_epilogue_drelu_bgrad", "_epilogue_dgelu", "_epilogue_dgelu_bgrad", "_epilogue_bgrada", "_epilogue_bgradb"};

// Problems at most this many output elements with a short reduction go to the small kernels.
constexpr int64_t kSmallOutputElements = 64 * 64;
constexpr int64_t kSmallReduction = 256;

using NameTable = std::array<std::array<std::array<std::string, kTransposeCombinations>, kEpilogues>,
                             static_cast<int>(KernelFamily::Count)>;

// Names live for the whole process; built once.
const NameTable& names() {
    static const auto table = [] {
        NameTable built;
        for (std::size_t family = 0; family < built.size(); ++family) {
            for (int epilogue = 0; epilogue < kEpilogues; ++epilogue) {
                for (int combination = 0; combination < kTransposeCombinations; ++combination) {
                    built[family][epilogue][combination] = std::string(kFamilies[family].prefix) +
                                                           kTransposeLetters[combination] +
                                                           kFamilies[family].suffix + kEpilogueTags[epilogue];
                }
            }
        }
        return built;
    }();
    return table;
}

}  // namespace

const char* kernel_name(KernelFamily family, Epilogue epilogue, int combination) {
    return names()[static_cast<int>(family)][static_cast<int>(epilogue)][combination].c_str();
}

KernelShape kernel_shape(KernelFamily family) { return kFamilies[static_cast<int>(family)].shape; }

int transpose_combination(bool transpose_a, bool transpose_b) {
    return (transpose_a ? 2 : 0) + (transpose_b ? 1 : 0);
}

KernelFamily choose_family(TbdsimPrecision precision, int64_t m, int64_t n, int64_t k) {
    switch (precision) {
        case TBDSIM_PRECISION_TF32: return KernelFamily::Tf32;
        case TBDSIM_PRECISION_FP16: return KernelFamily::Fp16;
        case TBDSIM_PRECISION_BF16: return KernelFamily::Bf16;
        case TBDSIM_PRECISION_FP64: return KernelFamily::Fp64;
        default: break;
    }
    const bool small = m * n <= kSmallOutputElements && k <= kSmallReduction;
    return small ? KernelFamily::Fp32Small : KernelFamily::Fp32Simt;
}

CUresult load_kernels(const DriverEntryPoints& driver, CUmodule* module, KernelTable* table) {
    CUresult result = driver.module_load_data(module, tbdsim_blas_fatbin);
    if (result != CUDA_SUCCESS) return result;
    for (int family = 0; family < static_cast<int>(KernelFamily::Count); ++family) {
        for (int epilogue = 0; epilogue < kEpilogues; ++epilogue) {
            for (int combination = 0; combination < kTransposeCombinations; ++combination) {
                result = driver.module_get_function(
                    &(*table)[family][epilogue][combination], *module,
                    kernel_name(static_cast<KernelFamily>(family), static_cast<Epilogue>(epilogue), combination));
                if (result != CUDA_SUCCESS) {
                    driver.module_unload(*module);
                    *module = nullptr;
                    return result;
                }
            }
        }
    }
    return CUDA_SUCCESS;
}

}  // namespace tbdsim::blas
