// Reads a whole JSON input into memory, decompressing gzip on the fly, padded as simdjson needs:
// from a regular file, a FIFO or a pipe (`... | tbdprof import /dev/stdin`, or `-` for stdin).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <string>

namespace tbdprof::interop {

// Called now and then with the bytes read so far and the input's size (0 when unknown: a pipe).
using ReadProgress = std::function<void(uint64_t done, uint64_t total)>;

// The caps on the JSON an import holds in memory (docs/interop.md, "Limits"). simdjson parses at
// most 4 GiB - 1 in one document, so more is never read. A gzip stream may expand at most
// kMaxGzipRatio times the compressed bytes read so far, plus kGzipAllowanceBytes: real traces
// compress 5-30 times, a gzip bomb ~1000 times (1 MB became 2.1 GB before this cap).
constexpr uint64_t kMaxJsonBytes = 0xFFFFFFFFull;
constexpr uint64_t kMaxGzipRatio = 100;
constexpr uint64_t kGzipAllowanceBytes = 64ull << 20;

struct InputLimits {
    // 0: the defaults above. Otherwise the user's own cap on the JSON bytes (--max-json-size),
    // which also lifts the ratio cap (still at most kMaxJsonBytes).
    uint64_t max_json_bytes = 0;
};

// "-" reads stdin. A FIFO nobody writes to is waited for at most TBDPROF_IMPORT_WAIT_SECONDS (60),
// saying so after a second. Throws InteropError on a missing or unreadable input, a truncated or
// corrupt gzip stream, an empty input, or one over the caps (with the option that lifts them).
simdjson::padded_string read_json_input(const std::string& path, const ReadProgress& progress = {},
                                        const InputLimits& limits = {});

}  // namespace tbdprof::interop
