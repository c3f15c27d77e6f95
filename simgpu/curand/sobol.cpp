#include "sobol.h"

#include <mutex>
#include <vector>

#include "philox.h"

namespace tbdsim::rand {
namespace {

// Polynomials over GF(2) as bit masks (bit i: coefficient of x^i), reduced modulo `modulus`.
uint64_t multiply_mod(uint64_t a, uint64_t b, uint64_t modulus, int degree) {
    uint64_t product = 0;
    for (; b != 0; b >>= 1) {
        if ((b & 1) != 0) product ^= a;
        a <<= 1;
        if (((a >> degree) & 1) != 0) a ^= modulus;
    }
    return product;
}

uint64_t power_of_x(uint64_t exponent, uint64_t modulus, int degree) {
    uint64_t result = 1, base = degree == 1 ? (2 ^ modulus) : 2;  // x mod p
    for (; exponent != 0; exponent >>= 1) {
        if ((exponent & 1) != 0) result = multiply_mod(result, base, modulus, degree);
        base = multiply_mod(base, base, modulus, degree);
    }
    return result;
}

std::vector<uint64_t> prime_factors(uint64_t n) {
    std::vector<uint64_t> factors;
    for (uint64_t p = 2; p * p <= n; ++p) {
        if (n % p != 0) continue;
        factors.push_back(p);
        while (n % p == 0) n /= p;
    }
    if (n > 1) factors.push_back(n);
    return factors;
}

// Primitive: x has order exactly 2^degree - 1 modulo the polynomial.
bool primitive(uint64_t polynomial, int degree) {
    const uint64_t order = (uint64_t{1} << degree) - 1;
    if (power_of_x(order, polynomial, degree) != 1) return false;
    for (uint64_t p : prime_factors(order))
        if (power_of_x(order / p, polynomial, degree) == 1) return false;
    return true;
}

// The first `count` primitive polynomials, by degree then value.
std::vector<std::pair<uint64_t, int>> primitive_polynomials(unsigned count) {
    std::vector<std::pair<uint64_t, int>> found;
    for (int degree = 1; found.size() < count; ++degree) {
        for (uint64_t low = 1; low < (uint64_t{1} << degree) && found.size() < count; low += 2) {
            const uint64_t polynomial = (uint64_t{1} << degree) | low;
            // An even number of terms means x + 1 divides it (degree > 1): not even irreducible.
            const bool even_terms = __builtin_popcountll(polynomial) % 2 == 0;
            if ((degree == 1 || !even_terms) && primitive(polynomial, degree)) found.emplace_back(polynomial, degree);
        }
    }
    return found;
}

// Direction numbers m_1..m_bits of one dimension (Bratley and Fox's recurrence), as v_k = m_k << (bits - k).
template <typename T>
void fill_dimension(T* v, int bits, uint64_t polynomial, int degree, uint64_t salt) {
    std::vector<T> m(static_cast<size_t>(bits) + 1);
    for (int k = 1; k <= bits; ++k) {
        if (k <= degree) {
            const T random = philox_value(salt, static_cast<uint64_t>(k));
            m[k] = ((random << 1) | 1) & (k == 64 ? ~T{0} : ((T{1} << k) - 1));  // odd, below 2^k
            continue;
        }
        T value = m[k - degree] ^ (m[k - degree] << degree);
        for (int i = 1; i < degree; ++i)
            if (((polynomial >> (degree - i)) & 1) != 0) value ^= m[k - i] << i;
        m[k] = value;
    }
    for (int k = 1; k <= bits; ++k) v[k - 1] = m[k] << (bits - k);
}

template <typename T>
std::vector<T> build_directions(bool scrambled) {
    constexpr int kBits = sizeof(T) * 8;
    std::vector<T> table(static_cast<size_t>(kMaxSobolDimensions) * kBits);
    for (int k = 0; k < kBits; ++k) table[k] = T{1} << (kBits - 1 - k);              // dimension 1: van der Corput
    static const auto polynomials = primitive_polynomials(kMaxSobolDimensions - 1);  // thread-safe, once
    for (unsigned d = 1; d < kMaxSobolDimensions; ++d) {
        const auto [polynomial, degree] = polynomials[d - 1];
        fill_dimension(&table[static_cast<size_t>(d) * kBits], kBits, polynomial, degree,
                       (scrambled ? 0x5C4A3B1Dull : 0x50B01ull) + d);
    }
    return table;
}

template <typename T>
std::vector<T> build_scramble() {
    std::vector<T> constants(kMaxSobolDimensions);
    for (unsigned d = 0; d < kMaxSobolDimensions; ++d) {
        const uint64_t high = philox_value(0x5C3A3B1Eull, 2 * d), low = philox_value(0x5C3A3B1Eull, 2 * d + 1);
        constants[d] = static_cast<T>((high << 32) | low);
    }
    return constants;
}

template <typename T>
const T* once(std::once_flag& flag, std::vector<T>*& table, std::vector<T> (*build)()) {
    std::call_once(flag, [&] { table = new std::vector<T>(build()); });  // kept for the process
    return table->data();
}

}  // namespace

const uint32_t* sobol_directions32(bool scrambled) {
    static std::once_flag flags[2];
    static std::vector<uint32_t>* tables[2] = {};
    return once<uint32_t>(
        flags[scrambled], tables[scrambled], scrambled ? +[] { return build_directions<uint32_t>(true); } : +[] {
            return build_directions<uint32_t>(false);
        });
}

const uint64_t* sobol_directions64(bool scrambled) {
    static std::once_flag flags[2];
    static std::vector<uint64_t>* tables[2] = {};
    return once<uint64_t>(
        flags[scrambled], tables[scrambled], scrambled ? +[] { return build_directions<uint64_t>(true); } : +[] {
            return build_directions<uint64_t>(false);
        });
}

const uint32_t* sobol_scramble32() {
    static std::once_flag flag;
    static std::vector<uint32_t>* table = nullptr;
    return once<uint32_t>(flag, table, &build_scramble<uint32_t>);
}

const uint64_t* sobol_scramble64() {
    static std::once_flag flag;
    static std::vector<uint64_t>* table = nullptr;
    return once<uint64_t>(flag, table, &build_scramble<uint64_t>);
}

// Gray-code order, as cuRAND's Sobol' generators: point i is the XOR of the direction numbers of
// the set bits of i ^ (i >> 1).
uint32_t sobol_point32(const uint32_t* directions, uint64_t index) {
    uint32_t value = 0;
    for (uint64_t gray = index ^ (index >> 1), bit = 0; gray != 0 && bit < 32; gray >>= 1, ++bit)
        if ((gray & 1) != 0) value ^= directions[bit];
    return value;
}

uint64_t sobol_point64(const uint64_t* directions, uint64_t index) {
    uint64_t value = 0;
    for (uint64_t gray = index ^ (index >> 1), bit = 0; gray != 0 && bit < 64; gray >>= 1, ++bit)
        if ((gray & 1) != 0) value ^= directions[bit];
    return value;
}

}  // namespace tbdsim::rand
