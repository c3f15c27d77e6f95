// What our heuristic writes into a cublasLtMatmulAlgo_t (a semi-opaque 64-byte struct the caller
// copies around and passes back to cublasLtMatmul): a tag, so that we recognise our own algos, and the
// workspace the algo needs, which cublasLtMatmul checks against the workspace it is given.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>

namespace tbdsim::cublaslt {

inline constexpr uint64_t kAlgoTag = 0x746264'73696d'4c74ULL;  // "tbdsimLt"

// The workspace our algos use at most (split-K partial sums, as real kernels use it).
inline constexpr uint64_t kAlgoWorkspaceBytes = 4u << 20;

inline cublasLtMatmulAlgo_t make_algo(uint64_t workspace_bytes) {
    cublasLtMatmulAlgo_t algo{};
    algo.data[0] = kAlgoTag;
    algo.data[1] = workspace_bytes;
    return algo;
}

// The workspace an algo needs, or nothing for an algo we did not make (the caller's own choice).
inline std::optional<uint64_t> algo_workspace_bytes(const cublasLtMatmulAlgo_t& algo) {
    if (algo.data[0] != kAlgoTag) return std::nullopt;
    return algo.data[1];
}

}  // namespace tbdsim::cublaslt
