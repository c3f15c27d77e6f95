// The one JSON writer: the analyzer's documents (report, compare, diff; built in memory) and the
// Chrome trace export (millions of events, streamed into an OutputFile in large blocks). Two layers
// over one buffer:
//  - structured: begin_object / value / end_object, with keys, commas and (pretty) indentation done
//    here; for the small documents;
//  - raw: the caller lays out the structure (raw, key, string, number, micros); for the export, whose
//    events have a fixed shape and must cost no bookkeeping.
// Strings are made valid UTF-8 (names from a trace may hold any bytes; strict parsers reject invalid
// UTF-8) and escaped; numbers that are not finite are written as null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::trace {

class OutputFile;

class JsonWriter {
public:
    // Into memory: the document is str().
    explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}
    // Into `out`, compact, written whenever the buffer holds a megabyte and by flush(). Writing throws
    // OutputFileError (a full disk); call flush() at the end: the destructor does not write.
    explicit JsonWriter(OutputFile& out) : file_(&out), pretty_(false) { buffer_.reserve(kFlushAt + 4096); }
    JsonWriter(const JsonWriter&) = delete;
    JsonWriter& operator=(const JsonWriter&) = delete;

    // Structured layer. An empty key: an element of an array (or the top-level value).
    JsonWriter& begin_object(std::string_view key = {}) { return open(key, '{'); }
    JsonWriter& end_object();
    JsonWriter& begin_array(std::string_view key = {}) { return open(key, '['); }
    JsonWriter& end_array() { return close(']'); }
    JsonWriter& value(std::string_view key, std::string_view text) { return prefix(key).string(text); }
    JsonWriter& value(std::string_view key, const char* text) { return value(key, std::string_view(text)); }
    JsonWriter& value(std::string_view key, const std::string& text) { return value(key, std::string_view(text)); }
    JsonWriter& value(std::string_view key, double number) { return prefix(key).number(number); }
    JsonWriter& value(std::string_view key, int64_t number) { return prefix(key).number(number); }
    JsonWriter& value(std::string_view key, int number) { return value(key, static_cast<int64_t>(number)); }
    JsonWriter& value(std::string_view key, bool flag) { return prefix(key).raw(flag ? "true" : "false"); }
    JsonWriter& value(std::string_view key, std::optional<double> number) {
        return number ? value(key, *number) : null(key);
    }
    JsonWriter& null(std::string_view key) { return prefix(key).raw("null"); }

    // Raw layer: nothing but the text asked for.
    JsonWriter& raw(std::string_view text);
    JsonWriter& string(std::string_view text);  // quoted, valid UTF-8, escaped
    JsonWriter& number(int64_t value);
    // Whole numbers (FLOP counts, bytes) as integers, others as the shortest text that reads back as
    // the same double.
    JsonWriter& number(double value);
    // Nanoseconds as Chrome's microseconds with three decimals: 1234567 -> 1234.567.
    JsonWriter& micros(int64_t ns);
    // "key": (with a leading comma unless `first`)
    JsonWriter& key(std::string_view name, bool first = false);

    const std::string& str() const { return buffer_; }
    void flush();
    uint64_t bytes_written() const { return written_ + buffer_.size(); }

private:
    static constexpr size_t kFlushAt = 1 << 20;
    void spill() {
        if (file_ != nullptr && buffer_.size() >= kFlushAt) flush();
    }
    JsonWriter& prefix(std::string_view key);  // the comma, indentation and key before a value
    JsonWriter& open(std::string_view key, char bracket);
    JsonWriter& close(char bracket);
    void newline();

    OutputFile* file_ = nullptr;
    std::string buffer_;
    uint64_t written_ = 0;
    std::vector<bool> first_;  // per open container: no element written yet
    bool pretty_;
};

}  // namespace tbdprof::trace
