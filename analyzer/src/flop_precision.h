// Which kind of arithmetic a library call's FLOPs are, from its compute type and operand types.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tbdprof::analyzer {

enum class FlopKind : uint8_t { fp32, tensor, other, none };

// compute_type: cublasComputeType_t; a_type: cudaDataType of A. Either may be unknown.
FlopKind classify_flops(std::string_view call_name, std::optional<int64_t> compute_type,
                        std::optional<int64_t> a_type);

}  // namespace tbdprof::analyzer
