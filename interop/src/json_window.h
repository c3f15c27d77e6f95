// A bounded window over a JSON text that arrives in pieces (a gzip stream, a pipe), with the few
// structural scans a streaming import needs: where the value at the cursor ends, skipping a value of
// any size without holding it, and the whole input for the rare document that must be parsed at
// once. Only the bytes from the last release() on are kept, so memory follows the largest value
// looked at, not the size of the input. The values themselves are parsed by simdjson
// (chrome_json_parser.cpp); this scan only finds their ends (strings and brackets), and what lies
// between values (commas, colons, whitespace) is checked by the caller.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tbdprof::interop {

// Where JSON text comes from: read() gives up to n bytes, 0 at the end; it throws on a bad input.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual size_t read(char* into, size_t n) = 0;
};

// Text already in memory (the fuzz target and tests parse documents without a file).
class MemorySource final : public ByteSource {
public:
    explicit MemorySource(std::string_view text) : text_(text) {}
    size_t read(char* into, size_t n) override;

private:
    std::string_view text_;
};

class JsonWindow {
public:
    explicit JsonWindow(ByteSource& source) : source_(source) {}

    // The byte at the cursor after skipping whitespace (the whitespace is passed), -1 at the end.
    int peek_nonspace();
    void advance(uint64_t bytes) { cursor_ += bytes; }
    uint64_t cursor() const { return cursor_; }
    // Bytes read from the source so far.
    uint64_t bytes_read() const { return base_ + size_; }

    // The length of the value that starts at the cursor (a string, an object or array with all it
    // holds, or a scalar's text), read in as far as needed; the cursor does not move. Throws
    // InteropError("invalid JSON: ...") when the input ends inside it or no value starts there.
    uint64_t value_length();
    // The text [from, to): both at or after the last release(), and read in (value_length did).
    std::string_view text(uint64_t from, uint64_t to) const;
    // Array elements from the cursor (inside an array, at an element): the end of the first element
    // that ends at least min_bytes after the cursor (the offset after it), or the offset of the
    // array's closing bracket when that comes first. One scan for many elements; it does not check
    // what lies between them (simdjson does, parsing them). False when the input ends first. The
    // cursor does not move.
    bool elements_end(uint64_t min_bytes, uint64_t& end_offset);
    // Moves the cursor back (to or after the last release()) or on.
    void seek(uint64_t offset) { cursor_ = offset; }
    // Passes the value at the cursor, keeping none of it: an unknown key's value of any size.
    void skip_value();
    // Forgets everything before the cursor.
    void release() { keep_ = cursor_; }

    // The whole input from its first byte, for a document that is parsed at once; only before
    // anything was released. Throws InteropError over max_bytes.
    simdjson::padded_string whole_input(uint64_t max_bytes);

private:
    bool fill();
    void need(uint64_t offset);  // reads until the byte at `offset` is in, or throws
    uint64_t string_end(uint64_t open);
    uint64_t container_end(uint64_t open);
    uint64_t scalar_end(uint64_t start);
    const char* at(uint64_t offset) const { return buf_.data() + (offset - base_); }
    uint64_t end() const { return base_ + size_; }

    ByteSource& source_;
    std::vector<char> buf_;
    size_t size_ = 0;      // bytes held, from offset base_
    uint64_t base_ = 0;    // the input offset of buf_[0]
    uint64_t cursor_ = 0;  // input offsets from here on
    uint64_t keep_ = 0;
    bool at_end_ = false;
    bool skipping_ = false;  // skip_value(): nothing read needs to stay
};

}  // namespace tbdprof::interop
