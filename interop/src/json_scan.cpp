#include "json_scan.h"

#if defined(__x86_64__)
#include <immintrin.h>
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

#if defined(__x86_64__)
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

// A block's quotes, backslashes and brackets as bit masks (opening brackets also in `brackets`).
struct BlockMasks {
    uint64_t quotes, backslashes, opens, brackets;
};

BlockMasks masks_sse2(const char* p) {
    __m128i v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    __m128i folded[4];
    for (int i = 0; i < 4; ++i) folded[i] = _mm_or_si128(v[i], _mm_set1_epi8(0x20));
    const uint64_t opens = byte_mask(folded, '{');
    return {byte_mask(v, '"'), byte_mask(v, '\\'), opens, opens | byte_mask(folded, '}')};
}

// The same with AVX2 (two 32-byte compares per byte class where SSE2 takes four), chosen at run time:
// this scan sees every byte of a streamed trace.
__attribute__((target("avx2"))) uint64_t byte_mask_avx2(__m256i low, __m256i high, char c) {
    const __m256i wanted = _mm256_set1_epi8(c);
    const auto low_bits = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, wanted)));
    const auto high_bits = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, wanted)));
    return static_cast<uint64_t>(low_bits) | static_cast<uint64_t>(high_bits) << 32;
}

__attribute__((target("avx2"))) BlockMasks masks_avx2(const char* p) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i fold = _mm256_set1_epi8(0x20);
    const __m256i low_folded = _mm256_or_si256(low, fold);
    const __m256i high_folded = _mm256_or_si256(high, fold);
    const uint64_t opens = byte_mask_avx2(low_folded, high_folded, '{');
    return {byte_mask_avx2(low, high, '"'), byte_mask_avx2(low, high, '\\'), opens,
            opens | byte_mask_avx2(low_folded, high_folded, '}')};
}

// The carry-less product with all ones is the prefix XOR in one instruction.
__attribute__((target("pclmul"))) uint64_t prefix_xor_clmul(uint64_t bits) {
    const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(bits)), _mm_set1_epi8(-1), 0);
    return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
}

template <BlockMasks (*Masks)(const char*), uint64_t (*PrefixXor)(uint64_t)>
const char* find_container_end_blocks(const char* p, const char* stop, ContainerScan& scan) {
    while (stop - p >= kBlockBytes) {
        const BlockMasks block = Masks(p);
        if (scan.escaped || block.backslashes != 0) {
            // Escapes are rare in traces: such a block goes a byte at a time.
            if (const char* end = find_container_end_bytewise(p, p + kBlockBytes, scan)) return end;
            p += kBlockBytes;
            continue;
        }
        const uint64_t strings = PrefixXor(block.quotes) ^ (scan.in_string ? ~uint64_t{0} : 0);
        const uint64_t opens = block.opens & ~strings;
        for (uint64_t brackets = block.brackets & ~strings; brackets != 0; brackets &= brackets - 1) {
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

using BlockScan = const char* (*)(const char*, const char*, ContainerScan&);

BlockScan choose_block_scan() {
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul"))
        return find_container_end_blocks<masks_avx2, prefix_xor_clmul>;
    return find_container_end_blocks<masks_sse2, prefix_xor>;
}

}  // namespace

const char* find_container_end(const char* p, const char* stop, ContainerScan& scan) {
    static const BlockScan block_scan = choose_block_scan();
    return block_scan(p, stop, scan);
}

const char* find_container_end_sse2(const char* p, const char* stop, ContainerScan& scan) {
    return find_container_end_blocks<masks_sse2, prefix_xor>(p, stop, scan);
}
#else
const char* find_container_end(const char* p, const char* stop, ContainerScan& scan) {
    return find_container_end_bytewise(p, stop, scan);
}

const char* find_container_end_sse2(const char* p, const char* stop, ContainerScan& scan) {
    return find_container_end_bytewise(p, stop, scan);
}
#endif

}  // namespace tbdprof::interop
