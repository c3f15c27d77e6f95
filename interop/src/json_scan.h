// Finds where a JSON object or array ends in text that arrives in pieces: the nesting depth and
// whether the scan is inside a string carry from one piece to the next. The streaming import
// (json_window.h) cuts every trace event out of the input this way before simdjson parses a batch
// of them, so this scan sees every byte of a trace: where SSE2 is there (every x86-64), it looks at
// 64 bytes at a time (bit masks of quotes and brackets, strings found by a prefix XOR of the quote
// bits); a block with a backslash, and the last bytes of a piece, go a byte at a time.
#pragma once

#include <cstdint>

namespace tbdprof::interop {

struct ContainerScan {
    uint64_t depth = 0;      // brackets open ('{' or '['; mismatched pairs still count)
    bool in_string = false;  // inside a string: brackets there do not count
    bool escaped = false;    // the byte before was a backslash inside a string
    // Elements of an open array, many at a time (the streaming import's batches of events): a
    // bracket that brings the depth back to element_depth (1) ends the scan too, when the byte after
    // it is at or after elements_from. 0: only depth 0 ends it.
    uint64_t element_depth = 0;
    const char* elements_from = nullptr;
};

// Scans [p, stop) on from `scan` (the first byte given is the opening bracket when scan.depth is 0)
// and returns the byte after the bracket that closes it (or that ends an element, above), or nullptr
// when the text ends first (`scan` then holds the state to go on with the next piece).
const char* find_container_end(const char* p, const char* stop, ContainerScan& scan);

// The block scan with SSE2 only (what find_container_end uses where the CPU lacks AVX2 or
// PCLMULQDQ), so that tests check both on any x86-64 machine.
const char* find_container_end_sse2(const char* p, const char* stop, ContainerScan& scan);

// The same a byte at a time: the reference the block scan is tested against, and its fallback.
const char* find_container_end_bytewise(const char* p, const char* stop, ContainerScan& scan);

}  // namespace tbdprof::interop
