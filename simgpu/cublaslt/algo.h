// What our heuristic and cublasLtMatmulAlgoInit write into a cublasLtMatmulAlgo_t (a semi-opaque
// 64-byte struct the caller copies around and passes back to cublasLtMatmul): a tag, so that we
// recognise our own algos, the workspace the algo needs, which cublasLtMatmul checks against the
// workspace it is given, and the algo's configuration attributes.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <cstring>
#include <optional>

namespace tbdsim::cublaslt {

inline constexpr uint64_t kAlgoTag = 0x746264'73696d'4c74ULL;  // "tbdsimLt"

// The workspace our algos use at most (split-K partial sums, as real kernels use it).
inline constexpr uint64_t kAlgoWorkspaceBytes = 4u << 20;

// The configuration cublasLtMatmulAlgoConfigSetAttribute/GetAttribute read and write, kept in the
// algo's data[2..5] (each field has its attribute's documented type).
struct AlgoConfig {
    int32_t id = 0;
    uint32_t tile = CUBLASLT_MATMUL_TILE_128x128;
    uint32_t splitk = 1;
    uint32_t reduction_scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
    uint32_t cta_swizzling = 0;
    uint32_t custom_option = 0;
    uint32_t stages = CUBLASLT_MATMUL_STAGES_32x3;
    uint16_t inner_shape = 0;
    uint16_t cluster_shape = 0;
};
static_assert(sizeof(AlgoConfig) <= 4 * sizeof(uint64_t));
inline constexpr int kAlgoConfigWord = 2;

inline cublasLtMatmulAlgo_t make_algo(uint64_t workspace_bytes, const AlgoConfig& config = {}) {
    cublasLtMatmulAlgo_t algo{};
    algo.data[0] = kAlgoTag;
    algo.data[1] = workspace_bytes;
    std::memcpy(&algo.data[kAlgoConfigWord], &config, sizeof config);
    return algo;
}

inline AlgoConfig algo_config(const cublasLtMatmulAlgo_t& algo) {
    AlgoConfig config;
    std::memcpy(static_cast<void*>(&config), &algo.data[kAlgoConfigWord], sizeof config);
    return config;
}

// The workspace an algo needs, or nothing for an algo we did not make (the caller's own choice).
inline std::optional<uint64_t> algo_workspace_bytes(const cublasLtMatmulAlgo_t& algo) {
    if (algo.data[0] != kAlgoTag) return std::nullopt;
    return algo.data[1];
}

}  // namespace tbdsim::cublaslt
