// Reads a raw event file (raw_format.h) written by the collector. Used by the trace builder and by
// the collector's own tests. The whole file is read into memory; records are handed out as views
// into it, valid as long as the reader lives.
//
// Robustness: a file that ends mid-record (the process was killed while the writer was writing) is
// read up to the last whole record and `truncated()` says so; a record header with an impossible
// size (0, not a multiple of 8) stops reading the same way. Unknown record kinds are handed out like
// any other: callers skip what they do not know.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tbdprof/raw_format.h"

namespace tbdprof::raw {

// One record inside a file. `as<T>()` returns null when the record is shorter than T (a reader built
// against an older header sees only the fields it knows; newer fields at the end are ignored).
class RecordView {
public:
    RecordView(const uint8_t* bytes, size_t size) : bytes_(bytes), size_(size) {}

    RecordKind kind() const { return header().kind; }
    uint32_t tid() const { return header().tid; }
    size_t size() const { return size_; }
    const uint8_t* bytes() const { return bytes_; }
    const RawRecordHeader& header() const { return *reinterpret_cast<const RawRecordHeader*>(bytes_); }

    template <typename T>
    const T* as() const {
        return size_ >= sizeof(T) ? reinterpret_cast<const T*>(bytes_) : nullptr;
    }

    // A copy of the record as T: fields beyond the record's size are zero. Never fails.
    template <typename T>
    T value() const {
        T out{};
        std::memcpy(static_cast<void*>(&out), bytes_, size_ < sizeof(T) ? size_ : sizeof(T));
        return out;
    }

    // RawString: its text. Empty for other kinds or a malformed record.
    std::string_view string_text() const;
    // RawLaunch: the candidate pointer words after the fixed part.
    std::span<const RawPointerCandidate> launch_candidates() const;
    // RawStack: the instruction pointers after the fixed part, innermost first.
    std::span<const uint64_t> stack_ips() const;

private:
    const uint8_t* bytes_;
    size_t size_;
};

class RawFileReader {
public:
    // Reads `path`. On failure returns nullopt and, when `error` is given, says why in one line.
    static std::optional<RawFileReader> open(const std::string& path, std::string* error = nullptr);
    // Same, from bytes already in memory (tests).
    static std::optional<RawFileReader> from_bytes(std::vector<uint8_t> bytes, std::string* error = nullptr);

    RawFileReader(RawFileReader&&) = default;
    RawFileReader& operator=(RawFileReader&&) = default;
    RawFileReader(const RawFileReader&) = delete;  // the record views point into this object's bytes
    RawFileReader& operator=(const RawFileReader&) = delete;

    const RawFileHeader& header() const { return header_; }
    // Every whole record, in file order.
    const std::vector<RecordView>& records() const { return records_; }
    // True when the file ended inside a record or held a malformed record header.
    bool truncated() const { return truncated_; }

private:
    RawFileReader() = default;
    bool parse(std::string* error);

    std::vector<uint8_t> data_;
    RawFileHeader header_{};
    std::vector<RecordView> records_;
    bool truncated_ = false;
};

// Every `raw-<pid>.tbdraw` file in a run directory, sorted by name.
std::vector<std::string> list_raw_files(const std::string& run_dir);

}  // namespace tbdprof::raw
