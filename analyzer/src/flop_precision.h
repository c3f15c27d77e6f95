// Which precision a library call's FLOPs are, from what the trace says: the collector's
// library_calls.precision when present (it knows the handle's math mode), else the compute type and
// operand types (traces recorded before the column existed), else the entry point's name.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// compute_type: cublasComputeType_t; a_type: cudaDataType of A. Either may be unknown. Without a
// math mode, plain COMPUTE_32F on FP32 data counts as FP32.
Precision classify_flops(std::string_view call_name, std::optional<int64_t> compute_type,
                         std::optional<int64_t> a_type);

// library_calls.precision text: 'fp32', 'tf32', 'fp16', 'bf16', 'fp8', 'fp64'; 'int8', 'other' and
// names this build does not know are other.
Precision precision_from_name(std::string_view name);

}  // namespace tbdprof::analyzer
