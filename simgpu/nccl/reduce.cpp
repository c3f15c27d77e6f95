#include "reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

namespace tbdsim::nccl {
namespace {

// A binary floating format narrower than float: exponent and mantissa widths, bias, and whether the
// all-ones exponent encodes infinities (IEEE style) or, as in E4M3, only S.1111.111 is NaN.
struct NarrowFormat {
    int exponent_bits, mantissa_bits, bias;
    bool has_infinity;
};

NarrowFormat format_of(ncclDataType_t type) {
    switch (type) {
        case ncclBfloat16:
            return {8, 7, 127, true};
        case ncclFloat8e4m3:
            return {4, 3, 7, false};
        case ncclFloat8e5m2:
            return {5, 2, 15, true};
        default:
            return {5, 10, 15, true};  // ncclFloat16
    }
}

double max_finite(const NarrowFormat& f) {
    const int top_field = f.has_infinity ? (1 << f.exponent_bits) - 2 : (1 << f.exponent_bits) - 1;
    const int top_mantissa = f.has_infinity ? (1 << f.mantissa_bits) - 1 : (1 << f.mantissa_bits) - 2;
    return std::ldexp(double((1 << f.mantissa_bits) + top_mantissa), top_field - f.bias - f.mantissa_bits);
}

uint32_t nan_bits(const NarrowFormat& f) {
    const uint32_t all_exponent = (1u << f.exponent_bits) - 1;
    const uint32_t all_mantissa = (1u << f.mantissa_bits) - 1;
    return f.has_infinity ? (all_exponent << f.mantissa_bits) | (1u << (f.mantissa_bits - 1))
                          : (all_exponent << f.mantissa_bits) | all_mantissa;
}

// The magnitude bits (no sign) of |value| rounded to nearest, ties to even; overflow gives infinity,
// or the largest finite value in a format without one (E4M3, as CUDA's saturating conversion).
uint32_t encode_magnitude(double magnitude, const NarrowFormat& f) {
    const double largest = max_finite(f);
    const uint32_t infinity_bits = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
    if (magnitude == 0) return 0;
    int exponent = 0;
    std::frexp(magnitude, &exponent);
    exponent = std::max(exponent - 1, 1 - f.bias);  // subnormals share the smallest normal exponent
    uint64_t mantissa = uint64_t(std::nearbyint(std::ldexp(magnitude, f.mantissa_bits - exponent)));
    if (mantissa >> (f.mantissa_bits + 1)) {  // rounded up to the next power of two
        mantissa >>= 1;
        ++exponent;
    }
    if (std::ldexp(double(mantissa), exponent - f.mantissa_bits) > largest)
        return f.has_infinity ? infinity_bits : encode_magnitude(largest, f);
    if (mantissa < (uint64_t(1) << f.mantissa_bits)) return uint32_t(mantissa);  // subnormal
    const uint32_t field = uint32_t(exponent + f.bias);
    return (field << f.mantissa_bits) | uint32_t(mantissa - (uint64_t(1) << f.mantissa_bits));
}

// Elements of a type the CPU has: loaded, combined and stored as they are.
template <typename T>
struct NativeCodec {
    using Acc = T;
    Acc load(const void* base, size_t i) const {
        T value;
        std::memcpy(&value, static_cast<const char*>(base) + i * sizeof(T), sizeof(T));
        return value;
    }
    void store(void* base, size_t i, Acc value) const {
        std::memcpy(static_cast<char*>(base) + i * sizeof(T), &value, sizeof(T));
    }
    Acc round(Acc value) const { return value; }
    Acc from_double(double value) const { return static_cast<T>(value); }
};

// 16- and 8-bit floating elements: widened to float, rounded back on every store.
struct NarrowCodec {
    using Acc = float;
    ncclDataType_t type;
    size_t bytes() const { return type == ncclFloat16 || type == ncclBfloat16 ? 2 : 1; }
    Acc load(const void* base, size_t i) const {
        uint32_t bits = 0;
        std::memcpy(&bits, static_cast<const char*>(base) + i * bytes(), bytes());  // little-endian host
        return narrow_to_float(bits, type);
    }
    void store(void* base, size_t i, Acc value) const {
        const uint32_t bits = float_to_narrow(value, type);
        std::memcpy(static_cast<char*>(base) + i * bytes(), &bits, bytes());
    }
    Acc round(Acc value) const { return narrow_to_float(float_to_narrow(value, type), type); }
    Acc from_double(double value) const { return round(float(value)); }
};

template <typename Fn>
void with_codec(ncclDataType_t type, Fn&& fn) {
    switch (type) {
        case ncclInt8:
            fn(NativeCodec<int8_t>{});
            break;
        case ncclUint8:
            fn(NativeCodec<uint8_t>{});
            break;
        case ncclInt32:
            fn(NativeCodec<int32_t>{});
            break;
        case ncclUint32:
            fn(NativeCodec<uint32_t>{});
            break;
        case ncclInt64:
            fn(NativeCodec<int64_t>{});
            break;
        case ncclUint64:
            fn(NativeCodec<uint64_t>{});
            break;
        case ncclFloat32:
            fn(NativeCodec<float>{});
            break;
        case ncclFloat64:
            fn(NativeCodec<double>{});
            break;
        default:
            fn(NarrowCodec{type});
            break;  // half, bfloat16, both FP8 formats
    }
}

// One step of the reduction. Integers wrap around (computed in 64-bit unsigned arithmetic, then
// narrowed modulo 2^bits, which C++20 defines), as the GPU's integer units do.
template <typename Acc>
Acc combine(ReduceSpec::Kind kind, Acc a, Acc b) {
    using K = ReduceSpec::Kind;
    if (kind == K::Max) return std::max(a, b);
    if (kind == K::Min) return std::min(a, b);
    if constexpr (std::is_integral_v<Acc>) {
        if (kind == K::Prod) return static_cast<Acc>(uint64_t(a) * uint64_t(b));
        return static_cast<Acc>(uint64_t(a) + uint64_t(b));
    } else {
        return kind == K::Prod ? a * b : a + b;
    }
}

template <typename Codec>
typename Codec::Acc scaled(const Codec& codec, typename Codec::Acc x, const ReduceSpec& spec) {
    if (spec.kind != ReduceSpec::Kind::PreMulSum) return x;
    return codec.round(combine(ReduceSpec::Kind::Prod, x, codec.from_double(spec.scalar)));
}

struct PreMulSumEntry {
    double value = 1;
    const void* device_scalar = nullptr;  // read at every use when not null
    ncclDataType_t type = ncclFloat32;
};

struct PreMulSumRegistry {
    std::mutex mutex;
    std::map<int, PreMulSumEntry> by_op;
};

PreMulSumRegistry& registry() {
    static auto* instance = new PreMulSumRegistry;
    return *instance;
}

double scalar_value(const void* scalar, ncclDataType_t type) {
    double value = 0;
    with_codec(type, [&](const auto& codec) { value = double(codec.load(scalar, 0)); });
    return value;
}

bool is_floating(ncclDataType_t type) {
    return type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 || type == ncclBfloat16 ||
           type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
}

}  // namespace

float narrow_to_float(uint32_t bits, ncclDataType_t type) {
    const NarrowFormat f = format_of(type);
    const uint32_t width = uint32_t(f.exponent_bits + f.mantissa_bits);
    const bool negative = (bits >> width) & 1u;
    const uint32_t field = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
    const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
    const uint32_t all_ones = (1u << f.exponent_bits) - 1;
    double magnitude = 0;
    if ((bits & ((1u << width) - 1)) == nan_bits(f) || (f.has_infinity && field == all_ones && mantissa != 0))
        return std::nanf("");
    if (f.has_infinity && field == all_ones)
        magnitude = HUGE_VAL;
    else if (field == 0)
        magnitude = std::ldexp(double(mantissa), 1 - f.bias - f.mantissa_bits);
    else
        magnitude = std::ldexp(double((1u << f.mantissa_bits) | mantissa), int(field) - f.bias - f.mantissa_bits);
    return float(negative ? -magnitude : magnitude);
}

uint32_t float_to_narrow(float value, ncclDataType_t type) {
    const NarrowFormat f = format_of(type);
    if (std::isnan(value)) return nan_bits(f);
    const uint32_t sign = std::signbit(value) ? 1u << (f.exponent_bits + f.mantissa_bits) : 0u;
    const double magnitude = std::fabs(double(value));
    if (std::isinf(magnitude))
        return sign |
               (f.has_infinity ? ((1u << f.exponent_bits) - 1) << f.mantissa_bits : encode_magnitude(max_finite(f), f));
    return sign | encode_magnitude(magnitude, f);
}

bool reduce_spec(ncclRedOp_t op, ncclDataType_t type, int nranks, ReduceSpec* spec) {
    using K = ReduceSpec::Kind;
    *spec = {};
    switch (op) {
        case ncclSum:
            spec->kind = K::Sum;
            return true;
        case ncclProd:
            spec->kind = K::Prod;
            return true;
        case ncclMax:
            spec->kind = K::Max;
            return true;
        case ncclMin:
            spec->kind = K::Min;
            return true;
        case ncclAvg:
            if (is_floating(type)) {
                spec->kind = K::PreMulSum;
                spec->scalar = 1.0 / nranks;
            } else {
                spec->kind = K::SumPostDiv;
                spec->divisor = nranks;
            }
            return true;
        default:
            break;
    }
    PreMulSumRegistry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.by_op.find(int(op));
    if (it == r.by_op.end()) return false;
    spec->kind = K::PreMulSum;
    spec->scalar = it->second.device_scalar != nullptr ? scalar_value(it->second.device_scalar, it->second.type)
                                                       : it->second.value;
    return true;
}

void register_pre_mul_sum(ncclRedOp_t op, const void* scalar, ncclDataType_t type, ncclScalarResidence_t residence) {
    PreMulSumEntry entry;
    entry.type = type;
    if (residence == ncclScalarDevice)
        entry.device_scalar = scalar;
    else
        entry.value = scalar_value(scalar, type);
    PreMulSumRegistry& r = registry();
    std::lock_guard lock(r.mutex);
    r.by_op[int(op)] = entry;
}

void forget_pre_mul_sum(ncclRedOp_t op) {
    PreMulSumRegistry& r = registry();
    std::lock_guard lock(r.mutex);
    r.by_op.erase(int(op));
}

void reduce_first(void* acc, const void* x, size_t count, ncclDataType_t type, const ReduceSpec& spec) {
    with_codec(type, [&](const auto& codec) {
        for (size_t i = 0; i < count; ++i) codec.store(acc, i, scaled(codec, codec.load(x, i), spec));
    });
}

void reduce_next(void* acc, const void* x, size_t count, ncclDataType_t type, const ReduceSpec& spec) {
    const ReduceSpec::Kind step = spec.kind == ReduceSpec::Kind::PreMulSum || spec.kind == ReduceSpec::Kind::SumPostDiv
                                      ? ReduceSpec::Kind::Sum
                                      : spec.kind;
    with_codec(type, [&](const auto& codec) {
        for (size_t i = 0; i < count; ++i)
            codec.store(acc, i, combine(step, codec.load(acc, i), scaled(codec, codec.load(x, i), spec)));
    });
}

void reduce_finish(void* acc, size_t count, ncclDataType_t type, const ReduceSpec& spec) {
    if (spec.kind != ReduceSpec::Kind::SumPostDiv || spec.divisor <= 1) return;
    with_codec(type, [&](const auto& codec) {
        using Acc = typename std::decay_t<decltype(codec)>::Acc;
        const Acc divisor = static_cast<Acc>(spec.divisor);
        for (size_t i = 0; i < count; ++i) codec.store(acc, i, static_cast<Acc>(codec.load(acc, i) / divisor));
    });
}

}  // namespace tbdsim::nccl
