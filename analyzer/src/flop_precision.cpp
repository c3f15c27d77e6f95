#include "flop_precision.h"

namespace tbdprof::analyzer {
namespace {

// cudaDataType values (library_types.h).
constexpr int64_t kR32F = 0, kR16F = 2, kR16BF = 14, kR8F_E4M3 = 28, kR8F_E5M2 = 29;

bool is_low_precision(int64_t type) {
    return type == kR16F || type == kR16BF || type == kR8F_E4M3 || type == kR8F_E5M2;
}

}  // namespace

FlopKind classify_flops(std::string_view call_name, std::optional<int64_t> compute_type,
                        std::optional<int64_t> a_type) {
    if (compute_type) {
        switch (*compute_type) {
        case 68:  // CUBLAS_COMPUTE_32F
        case 69:  // CUBLAS_COMPUTE_32F_PEDANTIC
            if (!a_type || *a_type == kR32F) return FlopKind::fp32;
            // FP32 accumulation of FP16/BF16/FP8 inputs runs on tensor cores.
            return is_low_precision(*a_type) ? FlopKind::tensor : FlopKind::other;
        case 64: case 65:  // CUBLAS_COMPUTE_16F(_PEDANTIC)
        case 74: case 75:  // CUBLAS_COMPUTE_32F_FAST_16F / _16BF
        case 77:           // CUBLAS_COMPUTE_32F_FAST_TF32
        case 78:           // CUBLAS_COMPUTE_32F_EMULATED_16BFX9
            return FlopKind::tensor;
        default:  // 64F, 32I and anything newer
            return FlopKind::other;
        }
    }
    if (a_type) {
        if (*a_type == kR32F) return FlopKind::fp32;
        return is_low_precision(*a_type) ? FlopKind::tensor : FlopKind::other;
    }
    // Legacy entry points carry the type in their name.
    if (call_name.find("Sgemm") != std::string_view::npos) return FlopKind::fp32;
    if (call_name.find("Hgemm") != std::string_view::npos) return FlopKind::tensor;
    return FlopKind::other;
}

}  // namespace tbdprof::analyzer
