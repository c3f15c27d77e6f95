#include "routine_host.h"

#include <library_types.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>

namespace tbdsim::cublas {
namespace {

using Complex = std::complex<double>;

float half_to_float(uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const float sign = (h & 0x8000) != 0 ? -1.0f : 1.0f;
    if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
    if (exponent == 31) return mantissa != 0 ? NAN : sign * INFINITY;
    return sign * std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
}

uint16_t float_to_half(float value) {
    uint32_t f = 0;
    std::memcpy(&f, &value, sizeof f);
    const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000);
    const int exponent = static_cast<int>((f >> 23) & 0xff) - 127 + 15;
    uint32_t mantissa = f & 0x7fffff;
    if (exponent >= 31) return sign | 0x7c00;
    if (exponent <= 0) {
        if (exponent < -10) return sign;
        mantissa |= 0x800000;
        const int shift = 14 - exponent;
        auto half = static_cast<uint16_t>(mantissa >> shift);
        if (((mantissa >> (shift - 1)) & 1) != 0) ++half;
        return sign | half;
    }
    auto half = static_cast<uint16_t>(sign | (exponent << 10) | (mantissa >> 13));
    if ((mantissa & 0x1000) != 0) ++half;  // round half up
    return half;
}

float bf16_to_float(uint16_t b) {
    const uint32_t f = static_cast<uint32_t>(b) << 16;
    float value = 0;
    std::memcpy(&value, &f, sizeof value);
    return value;
}

uint16_t float_to_bf16(float value) {
    uint32_t f = 0;
    std::memcpy(&f, &value, sizeof f);
    return static_cast<uint16_t>((f + 0x7fff + ((f >> 16) & 1)) >> 16);  // round to nearest even
}

Complex element(const void* base, Elem type, int64_t index) {
    switch (type) {
        case Elem::S:
            return static_cast<const float*>(base)[index];
        case Elem::D:
            return static_cast<const double*>(base)[index];
        case Elem::C:
            return {static_cast<const float*>(base)[2 * index], static_cast<const float*>(base)[2 * index + 1]};
        case Elem::Z:
            return {static_cast<const double*>(base)[2 * index], static_cast<const double*>(base)[2 * index + 1]};
        case Elem::H:
            return half_to_float(static_cast<const uint16_t*>(base)[index]);
        case Elem::T:
            return bf16_to_float(static_cast<const uint16_t*>(base)[index]);
        default:
            return static_cast<const int8_t*>(base)[index];
    }
}

// Element i of a strided vector (negative increments start from the end, as BLAS defines).
Complex strided(const void* base, Elem type, int64_t n, int64_t inc, int64_t i) {
    return element(base, type, inc >= 0 ? i * inc : (n - 1 - i) * -inc);
}

// Stores a value as cudaDataType `type` (real types keep the real part).
void store(void* out, int type, Complex value) {
    switch (type) {
        case CUDA_R_64F:
            *static_cast<double*>(out) = value.real();
            break;
        case CUDA_C_32F:
            static_cast<float*>(out)[0] = static_cast<float>(value.real());
            static_cast<float*>(out)[1] = static_cast<float>(value.imag());
            break;
        case CUDA_C_64F:
            static_cast<double*>(out)[0] = value.real();
            static_cast<double*>(out)[1] = value.imag();
            break;
        case CUDA_R_16F:
            *static_cast<uint16_t*>(out) = float_to_half(static_cast<float>(value.real()));
            break;
        case CUDA_R_16BF:
            *static_cast<uint16_t*>(out) = float_to_bf16(static_cast<float>(value.real()));
            break;
        default:
            *static_cast<float*>(out) = static_cast<float>(value.real());
            break;
    }
}

// The cudaDataType a reduction's result is stored as: the Ex form's result type, else the data's
// type (real for nrm2/asum).
int result_type_of(Elem elem, const RoutineArgs& a) {
    if (a.result_type >= 0) return a.result_type;
    const bool is_double = elem == Elem::D || elem == Elem::Z;
    return is_double ? CUDA_R_64F : CUDA_R_32F;
}

void store_index(const RoutineArgs& a, int64_t index) {
    if (a.index64)
        *static_cast<int64_t*>(a.result) = index;
    else
        *static_cast<int*>(a.result) = static_cast<int>(index);
}

template <typename T>
void rotg_real(T* a, T* b, T* c, T* s) {
    const T roe = std::abs(*a) > std::abs(*b) ? *a : *b;
    const T scale = std::abs(*a) + std::abs(*b);
    if (scale == 0) {
        *c = 1, *s = 0, *a = 0, *b = 0;
        return;
    }
    T r = scale * std::sqrt((*a / scale) * (*a / scale) + (*b / scale) * (*b / scale));
    if (roe < 0) r = -r;
    *c = *a / r;
    *s = *b / r;
    T z = 1;
    if (std::abs(*a) > std::abs(*b)) z = *s;
    if (std::abs(*b) >= std::abs(*a) && *c != 0) z = 1 / *c;
    *a = r;
    *b = z;
}

template <typename T>
void rotg_complex(std::complex<T>* a, const std::complex<T>* b, T* c, std::complex<T>* s) {
    if (std::abs(*a) == 0) {
        *c = 0, *s = 1, *a = *b;
        return;
    }
    const T scale = std::abs(*a) + std::abs(*b);
    const T norm = scale * std::sqrt(std::norm(*a / scale) + std::norm(*b / scale));
    const std::complex<T> alpha = *a / std::abs(*a);
    *c = std::abs(*a) / norm;
    *s = alpha * std::conj(*b) / norm;
    *a = alpha * norm;
}

// The reference BLAS's modified Givens rotation, without its rescaling of d1 and d2 into
// [1/4096^2, 4096^2] (which only guards against under- and overflow).
template <typename T>
void rotmg(T* d1, T* d2, T* x1, T y1, T* param) {
    T flag = 0, h11 = 0, h12 = 0, h21 = 0, h22 = 0;
    const auto zero_all = [&] { flag = -1, h11 = h12 = h21 = h22 = 0, *d1 = *d2 = *x1 = 0; };
    if (*d1 < 0) {
        zero_all();
    } else {
        const T p2 = *d2 * y1;
        if (p2 == 0) {
            param[0] = -2;
            return;
        }
        const T p1 = *d1 * *x1, q2 = p2 * y1, q1 = p1 * *x1;
        if (std::abs(q1) > std::abs(q2)) {
            h21 = -y1 / *x1, h12 = p2 / p1;
            const T u = 1 - h12 * h21;
            if (u > 0)
                flag = 0, *d1 /= u, *d2 /= u, *x1 *= u;
            else
                zero_all();
        } else if (q2 < 0) {
            zero_all();
        } else {
            flag = 1, h11 = p1 / p2, h22 = *x1 / y1;
            const T u = 1 + h11 * h22, temp = *d2 / u;
            *d2 = *d1 / u, *d1 = temp, *x1 = y1 * u;
        }
    }
    param[0] = flag;
    if (flag < 0)
        param[1] = h11, param[2] = h21, param[3] = h12, param[4] = h22;
    else if (flag == 0)
        param[2] = h21, param[3] = h12;
    else
        param[1] = h11, param[4] = h22;
}

}  // namespace

void reduce_on_host(Family family, Elem elem, const RoutineArgs& a) {
    if (family == Family::Iamax || family == Family::Iamin) {
        int64_t best_index = 1;
        double best = 0;
        for (int64_t i = 0; i < a.n; ++i) {
            const Complex v = element(a.x, elem, i * a.incx);
            const double magnitude = std::abs(v.real()) + std::abs(v.imag());  // as BLAS defines it
            const bool better = family == Family::Iamax ? magnitude > best : magnitude < best;
            if (i == 0 || better) best = magnitude, best_index = i + 1;
        }
        store_index(a, best_index);
        return;
    }
    Complex sum = 0;
    for (int64_t i = 0; i < a.n; ++i) {
        const Complex x = strided(a.x, elem, a.n, a.incx, i);
        if (family == Family::DotEx)
            sum += x * strided(a.y, elem, a.n, a.incy, i);
        else if (family == Family::DotcEx)
            sum += std::conj(x) * strided(a.y, elem, a.n, a.incy, i);
        else if (family == Family::Nrm2Ex)
            sum += std::norm(x);
        else
            sum += std::abs(x.real()) + std::abs(x.imag());
    }
    if (family == Family::Nrm2Ex) sum = std::sqrt(sum.real());
    store(a.result, result_type_of(elem, a), sum);
}

void zero_host_result(Family family, Elem elem, const RoutineArgs& a) {
    if (family == Family::Iamax || family == Family::Iamin)
        store_index(a, 0);
    else
        store(a.result, result_type_of(elem, a), 0);
}

void rotation_on_host(Family family, Elem elem, const RoutineArgs& a) {
    const bool is_double = elem == Elem::D || elem == Elem::Z;
    if (family == Family::Rotmg) {
        if (is_double)
            rotmg(static_cast<double*>(a.d1), static_cast<double*>(a.d2), static_cast<double*>(a.x1),
                  *static_cast<const double*>(a.y1), static_cast<double*>(a.param));
        else
            rotmg(static_cast<float*>(a.d1), static_cast<float*>(a.d2), static_cast<float*>(a.x1),
                  *static_cast<const float*>(a.y1), static_cast<float*>(a.param));
        return;
    }
    switch (elem) {
        case Elem::D:
            rotg_real(static_cast<double*>(a.rot_a), static_cast<double*>(a.rot_b), static_cast<double*>(a.rot_c),
                      static_cast<double*>(a.rot_s));
            break;
        case Elem::C:
            rotg_complex(static_cast<std::complex<float>*>(a.rot_a), static_cast<std::complex<float>*>(a.rot_b),
                         static_cast<float*>(a.rot_c), static_cast<std::complex<float>*>(a.rot_s));
            break;
        case Elem::Z:
            rotg_complex(static_cast<std::complex<double>*>(a.rot_a), static_cast<std::complex<double>*>(a.rot_b),
                         static_cast<double*>(a.rot_c), static_cast<std::complex<double>*>(a.rot_s));
            break;
        default:
            rotg_real(static_cast<float*>(a.rot_a), static_cast<float*>(a.rot_b), static_cast<float*>(a.rot_c),
                      static_cast<float*>(a.rot_s));
            break;
    }
}

}  // namespace tbdsim::cublas
