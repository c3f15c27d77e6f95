// The JSON text of an import as a stream, decompressing gzip on the fly: from a regular file, a
// FIFO or a pipe (`... | tbdprof import /dev/stdin`, or `-` for stdin). Nothing is gathered here:
// the parser (chrome_json_parser.cpp) holds a bounded window of it (json_window.h).
#pragma once

#include "json_window.h"
#include "tbdprof/interop/interop_error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tbdprof::interop {

// Called now and then with the bytes read so far and the input's size (0 when unknown: a pipe).
using ReadProgress = std::function<void(uint64_t done, uint64_t total)>;

// The caps on the JSON an import reads (docs/interop.md, "Inputs and limits"). A gzip stream may
// expand at most kMaxGzipRatio times the compressed bytes read so far, plus kGzipAllowanceBytes:
// real traces compress 5-30 times, a gzip bomb ~1000 times (1 MB became 2.1 GB before this cap).
// A document parsed at once (a memory timeline) holds at most kMaxWholeDocumentBytes, what simdjson
// parses in one document; a Kineto trace is streamed and has no size cap of its own.
constexpr uint64_t kMaxWholeDocumentBytes = 0xFFFFFFFFull;
constexpr uint64_t kMaxGzipRatio = 100;
constexpr uint64_t kGzipAllowanceBytes = 64ull << 20;

struct InputLimits {
    // 0: the defaults above. Otherwise the user's own cap on the JSON bytes (--max-json-size),
    // which also lifts the ratio cap.
    uint64_t max_json_bytes = 0;
};

// An error of the input itself (its message already names the path), as opposed to its content.
class InputError : public InteropError {
public:
    using InteropError::InteropError;
};

// "-" reads stdin. A FIFO nobody writes to is waited for at most TBDPROF_IMPORT_WAIT_SECONDS (60),
// saying so after a second. The constructor reads the first bytes; read() gives the JSON text
// (decompressed), 0 at its end. Both throw InputError on a missing or unreadable input, a truncated
// or corrupt gzip stream, an empty input, or one over the caps (with the option that lifts them).
class JsonInput final : public ByteSource {
public:
    JsonInput(const std::string& path, ReadProgress progress = {}, InputLimits limits = {});
    ~JsonInput() override;
    JsonInput(const JsonInput&) = delete;
    JsonInput& operator=(const JsonInput&) = delete;

    size_t read(char* into, size_t n) override;
    const std::string& path() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace tbdprof::interop
