// A small buffered JSON text writer for the Chrome trace export: the caller lays out the structure,
// this class escapes strings, formats times, and writes in large blocks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tbdprof::interop {

class JsonWriter {
public:
    explicit JsonWriter(std::FILE* file) : file_(file) { buffer_.reserve(kFlushAt + 4096); }
    ~JsonWriter() { flush(); }
    JsonWriter(const JsonWriter&) = delete;
    JsonWriter& operator=(const JsonWriter&) = delete;

    JsonWriter& raw(std::string_view text) {
        buffer_.append(text);
        if (buffer_.size() >= kFlushAt) flush();
        return *this;
    }
    JsonWriter& string(std::string_view raw_text);  // quoted and escaped
    JsonWriter& number(int64_t value);
    JsonWriter& number(double value);
    // Nanoseconds as Chrome's microseconds with three decimals: 1234567 -> 1234.567.
    JsonWriter& micros(int64_t ns);
    // "key": (with a leading comma unless `first`)
    JsonWriter& key(std::string_view name, bool first = false);

    void flush();
    uint64_t bytes_written() const { return written_ + buffer_.size(); }
    bool failed() const { return failed_; }

private:
    static constexpr size_t kFlushAt = 1 << 20;
    std::FILE* file_;
    std::string buffer_;
    uint64_t written_ = 0;
    bool failed_ = false;
};

}  // namespace tbdprof::interop
