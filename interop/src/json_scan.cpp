#include "json_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tbdprof::interop {
namespace {

// After a closing bracket: the depth now, and the byte after it.
bool ends_scan(uint64_t depth, const char* after, const ContainerScan& scan) {
    return depth == 0 || (depth == scan.element_depth && after >= scan.elements_from);
}

}  // namespace

const char* find_container_end_bytewise(const char* p, const char* stop, ContainerScan& scan) {
    for (; p < stop; ++p) {
        const char c = *p;
        if (scan.in_string) {
            if (scan.escaped) {
                scan.escaped = false;
            } else if (c == '\\') {
                scan.escaped = true;
            } else if (c == '"') {
                scan.in_string = false;
            }
        } else if (c == '"') {
            scan.in_string = true;
        } else if (c == '{' || c == '[') {
            ++scan.depth;
        } else if ((c == '}' || c == ']') && ends_scan(--scan.depth, p + 1, scan)) {
            return p + 1;
        }
    }
    return nullptr;
}

#if defined(__SSE2__)
namespace {

constexpr long kBlockBytes = 64;

// Bit i set where block byte i is `c` (after `fold`: '{' | 0x20 == '{' and '[' | 0x20 == '{').
uint64_t byte_mask(const __m128i (&v)[4], char c) {
    const __m128i wanted = _mm_set1_epi8(c);
    uint64_t mask = 0;
    for (int i = 0; i < 4; ++i) {
        const auto bits = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v[i], wanted)));
        mask |= static_cast<uint64_t>(bits) << (16 * i);
    }
    return mask;
}

// Bit i = the XOR of bits 0..i: set from an opening quote up to the byte before its closing one.
uint64_t prefix_xor(uint64_t bits) {
    for (int shift = 1; shift < 64; shift *= 2) bits ^= bits << shift;
    return bits;
}

}  // namespace

const char* find_container_end(const char* p, const char* stop, ContainerScan& scan) {
    while (stop - p >= kBlockBytes) {
        __m128i v[4];
        for (int i = 0; i < 4; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        if (scan.escaped || byte_mask(v, '\\') != 0) {
            // Escapes are rare in traces: such a block goes a byte at a time.
            if (const char* end = find_container_end_bytewise(p, p + kBlockBytes, scan)) return end;
            p += kBlockBytes;
            continue;
        }
        const uint64_t strings = prefix_xor(byte_mask(v, '"')) ^ (scan.in_string ? ~uint64_t{0} : 0);
        __m128i folded[4];
        for (int i = 0; i < 4; ++i) folded[i] = _mm_or_si128(v[i], _mm_set1_epi8(0x20));
        const uint64_t opens = byte_mask(folded, '{') & ~strings;
        uint64_t brackets = (opens | byte_mask(folded, '}')) & ~strings;
        for (; brackets != 0; brackets &= brackets - 1) {
            const int at = __builtin_ctzll(brackets);
            if ((opens >> at) & 1) {
                ++scan.depth;
            } else if (ends_scan(--scan.depth, p + at + 1, scan)) {
                return p + at + 1;
            }
        }
        scan.in_string = (strings >> 63) != 0;
        p += kBlockBytes;
    }
    return find_container_end_bytewise(p, stop, scan);
}
#else
const char* find_container_end(const char* p, const char* stop, ContainerScan& scan) {
    return find_container_end_bytewise(p, stop, scan);
}
#endif

}  // namespace tbdprof::interop
