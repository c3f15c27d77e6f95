#include "json_window.h"

#include "json_scan.h"
#include "tbdprof/interop/interop_error.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace tbdprof::interop {
namespace {

// Read size: large enough that the source's per-call cost (a read(2), an inflate call) is noise.
constexpr size_t kReadBytes = 1 << 20;

constexpr std::array<bool, 256> byte_table(std::string_view members) {
    std::array<bool, 256> table{};
    for (char c : members) table[static_cast<unsigned char>(c)] = true;
    return table;
}
// Bytes that end a scalar's text (numbers, true, false, null).
constexpr std::array<bool, 256> kScalarEnd = byte_table(" \t\n\r,:]}\"{[");

bool is_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

size_t MemorySource::read(char* into, size_t n) {
    const size_t take = std::min(n, text_.size());
    std::memcpy(into, text_.data(), take);
    text_.remove_prefix(take);
    return take;
}

bool JsonWindow::fill() {
    if (at_end_) return false;
    // Drop what was released when it is half the buffer or leaves no room; grow only when what is
    // held (one value being looked at, or one batch of events) needs it.
    const size_t dead = static_cast<size_t>(keep_ - base_);
    if (dead > 0 && (dead >= buf_.size() / 2 || buf_.size() - size_ < kReadBytes)) {
        std::memmove(buf_.data(), buf_.data() + dead, size_ - dead);
        size_ -= dead;
        base_ = keep_;
    }
    if (buf_.size() - size_ < kReadBytes) buf_.resize(std::max(buf_.size() * 2, size_ + kReadBytes));
    const size_t got = source_.read(buf_.data() + size_, buf_.size() - size_);
    if (got == 0) {
        at_end_ = true;
        return false;
    }
    size_ += got;
    return true;
}

void JsonWindow::need(uint64_t offset) {
    while (offset >= end()) {
        if (skipping_) keep_ = std::min(offset, end());
        if (!fill())
            throw InteropError("invalid JSON: the document ends early (inside a value, at byte " +
                               std::to_string(end()) + ")");
    }
}

int JsonWindow::peek_nonspace() {
    for (;;) {
        if (cursor_ >= end() && !fill()) return -1;
        const char* p = at(cursor_);
        const char* stop = buf_.data() + size_;
        while (p < stop && is_space(*p)) ++p;
        cursor_ = base_ + static_cast<uint64_t>(p - buf_.data());
        if (p < stop) return static_cast<unsigned char>(*p);
    }
}

uint64_t JsonWindow::string_end(uint64_t open) {
    uint64_t i = open + 1;
    for (;;) {
        need(i);
        const char* p = at(i);
        const char* stop = buf_.data() + size_;
        const auto* quote = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(stop - p)));
        const char* limit = quote ? quote : stop;
        // An escape before the next quote: step over the escaped byte (which may be that quote).
        if (const auto* slash = static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(limit - p)))) {
            i = base_ + static_cast<uint64_t>(slash - buf_.data()) + 2;
            continue;
        }
        if (quote) return base_ + static_cast<uint64_t>(quote - buf_.data()) + 1;
        i = end();
    }
}

uint64_t JsonWindow::container_end(uint64_t open) {
    // The scan's state carries from one read to the next, so nothing before the read in hand is looked
    // at again (a value skipped need not be held).
    ContainerScan scan;
    for (uint64_t i = open;; i = end()) {
        need(i);
        const char* data = buf_.data();
        if (const char* after = find_container_end(at(i), data + size_, scan))
            return base_ + static_cast<uint64_t>(after - data);
    }
}

uint64_t JsonWindow::scalar_end(uint64_t start) {
    uint64_t i = start;
    for (;;) {
        if (i >= end()) {
            if (skipping_) keep_ = end();
            if (!fill()) return i;  // the input's end ends a scalar too
        }
        const char* p = at(i);
        const char* stop = buf_.data() + size_;
        while (p < stop && !kScalarEnd[static_cast<unsigned char>(*p)]) ++p;
        i = base_ + static_cast<uint64_t>(p - buf_.data());
        if (p < stop) return i;
    }
}

uint64_t JsonWindow::value_length() {
    need(cursor_);
    const char c = *at(cursor_);
    uint64_t value_end = 0;
    if (c == '"') {
        value_end = string_end(cursor_);
    } else if (c == '{' || c == '[') {
        value_end = container_end(cursor_);
    } else if (c == ',' || c == ':' || c == ']' || c == '}') {
        throw InteropError(std::string("invalid JSON: expected a value at byte ") + std::to_string(cursor_) +
                           ", found '" + c + "'");
    } else {
        value_end = scalar_end(cursor_);
    }
    return value_end - cursor_;
}

bool JsonWindow::elements_end(uint64_t min_bytes, uint64_t& end_offset) {
    ContainerScan scan;
    scan.depth = 1;  // inside the array
    const uint64_t wanted = cursor_ + min_bytes;
    for (uint64_t i = cursor_;; i = end()) {
        if (i >= end() && !fill()) return false;
        const char* data = buf_.data();
        const bool in_reach = wanted <= end();
        scan.element_depth = in_reach ? 1 : 0;
        scan.elements_from = in_reach ? at(wanted) : nullptr;
        if (const char* after = find_container_end(at(i), data + size_, scan)) {
            end_offset = base_ + static_cast<uint64_t>(after - data);
            if (scan.depth == 0) --end_offset;  // the array's ']'
            return true;
        }
    }
}

std::string_view JsonWindow::text(uint64_t from, uint64_t to) const {
    return {at(from), static_cast<size_t>(to - from)};
}

void JsonWindow::skip_value() {
    skipping_ = true;
    try {
        cursor_ += value_length();
    } catch (...) {
        skipping_ = false;
        throw;
    }
    skipping_ = false;
}

simdjson::padded_string JsonWindow::whole_input(uint64_t max_bytes) {
    if (base_ != 0) throw std::logic_error("JsonWindow::whole_input after a part was released");
    while (fill()) {
        if (size_ > max_bytes) {
            throw InteropError("holds more than " + std::to_string(max_bytes / 1000000) +
                               " MB of JSON, more than tbdprof import parses as one document");
        }
    }
    return simdjson::padded_string(buf_.data(), size_);
}

}  // namespace tbdprof::interop
