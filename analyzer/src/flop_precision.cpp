#include "flop_precision.h"

namespace tbdprof::analyzer {
namespace {

// cudaDataType values (library_types.h).
constexpr int64_t kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14, kR8F_E4M3 = 28, kR8F_E5M2 = 29;

// The tensor-core format of an input type, or none.
std::optional<Precision> input_format(int64_t type) {
    if (type == kR16F) return Precision::fp16;
    if (type == kR16BF) return Precision::bf16;
    if (type == kR8F_E4M3 || type == kR8F_E5M2) return Precision::fp8;
    return std::nullopt;
}

constexpr const char* kNames[kPrecisionCount] = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp64", "other"};
constexpr const char* kLabels[kPrecisionCount] = {
    "FP32", "TF32 (tensor cores)",     "FP16 (tensor cores)", "BF16 (tensor cores)", "FP8 (tensor cores)",
    "FP64", "other (integer, unknown)"};

}  // namespace

const char* precision_name(Precision p) {
    const auto i = static_cast<size_t>(p);
    return i < kPrecisionCount ? kNames[i] : "other";
}

const char* precision_label(Precision p) {
    const auto i = static_cast<size_t>(p);
    return i < kPrecisionCount ? kLabels[i] : "other";
}

Precision precision_from_name(std::string_view name) {
    for (int i = 0; i < kPrecisionCount; ++i) {
        if (name == kNames[i]) return static_cast<Precision>(i);
    }
    return Precision::other;
}

Precision classify_flops(std::string_view call_name, std::optional<int64_t> compute_type,
                         std::optional<int64_t> a_type) {
    const bool fp32_data = !a_type || *a_type == kR32F;
    // Low-precision inputs run on tensor cores in their own format whatever the accumulation.
    auto low_or = [&](Precision fp32_case) {
        if (fp32_data) return fp32_case;
        return input_format(*a_type).value_or(Precision::other);
    };
    if (compute_type) {
        switch (*compute_type) {
            case 64:
            case 65:
                return Precision::fp16;  // CUBLAS_COMPUTE_16F(_PEDANTIC)
            case 68:
            case 69:
                return low_or(Precision::fp32);  // CUBLAS_COMPUTE_32F(_PEDANTIC)
            case 74:
                return low_or(Precision::fp16);  // CUBLAS_COMPUTE_32F_FAST_16F
            case 75:
            case 78:
                return low_or(Precision::bf16);  // _FAST_16BF, _EMULATED_16BFX9
            case 77:
                return low_or(Precision::tf32);  // _FAST_TF32
            case 70:
            case 71:
            case 79:
                return Precision::fp64;  // CUBLAS_COMPUTE_64F...
            default:
                return Precision::other;  // 32I and anything newer
        }
    }
    if (a_type) {
        if (*a_type == kR32F) return Precision::fp32;
        if (*a_type == kR64F) return Precision::fp64;
        return input_format(*a_type).value_or(Precision::other);
    }
    // Legacy entry points carry the type in their name.
    if (call_name.find("Sgemm") != std::string_view::npos) return Precision::fp32;
    if (call_name.find("Hgemm") != std::string_view::npos) return Precision::fp16;
    if (call_name.find("Dgemm") != std::string_view::npos) return Precision::fp64;
    return Precision::other;
}

}  // namespace tbdprof::analyzer
