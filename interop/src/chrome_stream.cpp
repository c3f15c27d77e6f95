#include "chrome_stream.h"

#include "input_file.h"
#include "memory_timeline_parser.h"
#include "tbdprof/interop/interop_error.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace tbdprof::interop {
namespace {

using simdjson::ondemand::json_type;

// Events per simdjson document: about this many bytes of JSON. Large enough that simdjson's cost
// per document is noise, small enough that the window stays a few MB.
constexpr uint64_t kBatchBytes = 1 << 20;

[[noreturn]] void invalid(const std::string& what, uint64_t offset) {
    throw InteropError("invalid JSON: " + what + " at byte " + std::to_string(offset));
}

// A document that is neither an object nor an array of events: the reason, in simdjson's words
// when it is not JSON at all.
[[noreturn]] void reject_document(const simdjson::padded_string& json) {
    simdjson::ondemand::parser parser;
    try {
        simdjson::ondemand::document doc = parser.iterate(json);
        const json_type type = doc.type();
        throw InteropError("the JSON document is a " + std::string(type == json_type::string ? "string" : "scalar") +
                           ", not a trace (expected an object with \"traceEvents\" or an array of events)");
    } catch (const simdjson::simdjson_error& error) {
        throw InteropError(std::string("invalid JSON: ") + error.what());
    }
}

class TraceStreamReader {
public:
    TraceStreamReader(ByteSource& source, ForeignTrace& out, const ParseProgress& progress)
        : window_(source), parser_(out, progress), out_(out) {}

    void read() {
        const int first = window_.peek_nonspace();
        if (first == '{') {
            read_object();
        } else if (first == '[') {
            // The Chrome "JSON Array Format" (the events alone), or a memory timeline's rows.
            window_.advance(1);
            if (window_.peek_nonspace() == '[') return read_whole_document();
            read_events();
            found_events_ = true;
        } else {
            return read_whole_document();
        }
        if (window_.peek_nonspace() != -1) throw InteropError("unexpected text after the end of the JSON document");
        if (!found_events_) throw InteropError("the JSON is not a trace: it has no \"traceEvents\" array");
        parser_.finish(window_.bytes_read());
    }

private:
    void read_whole_document() {
        const simdjson::padded_string json = window_.whole_input(kMaxWholeDocumentBytes);
        if (!looks_like_memory_timeline(json)) reject_document(json);
        parse_memory_timeline(json, out_);
    }

    void read_object() {
        window_.advance(1);
        int next = window_.peek_nonspace();
        if (next == '}') return window_.advance(1);
        for (;;) {
            if (next != '"') invalid("expected a key", window_.cursor());
            const uint64_t key_bytes = window_.value_length();
            const std::string key = parser_.unescape_key(window_.text(window_.cursor(), window_.cursor() + key_bytes));
            window_.advance(key_bytes);
            if (window_.peek_nonspace() != ':') invalid("expected ':' after a key", window_.cursor());
            window_.advance(1);
            read_top_level_value(key);
            window_.release();
            next = window_.peek_nonspace();
            window_.advance(1);
            if (next == '}') return;
            if (next != ',') invalid("expected ',' or '}' after a value", window_.cursor() - 1);
            next = window_.peek_nonspace();
        }
    }

    void read_top_level_value(const std::string& key) {
        const int first = window_.peek_nonspace();
        if (key == "traceEvents") {
            if (first != '[' && first != -1) throw InteropError("\"traceEvents\" is not an array");
            window_.advance(1);
            read_events();
            found_events_ = true;
        } else if ((first == '{' || first == '[') && key != "deviceProperties" && key != "distributedInfo") {
            window_.skip_value();  // only scalars of other keys are kept (as run notes)
        } else {
            const uint64_t bytes = window_.value_length();
            parser_.add_top_level(key, window_.text(window_.cursor(), window_.cursor() + bytes));
            window_.advance(bytes);
        }
    }

    // The elements of an array whose '[' was passed, a batch at a time, through its ']'.
    void read_events() {
        int next = window_.peek_nonspace();
        window_.release();
        if (next == ']') return window_.advance(1);
        for (bool closed = false; !closed;) {
            const uint64_t batch_begin = window_.cursor();
            uint64_t batch_end = batch_begin;
            while (!closed && batch_end - batch_begin < kBatchBytes) {
                window_.advance(window_.value_length());
                batch_end = window_.cursor();
                next = window_.peek_nonspace();
                window_.advance(1);
                if (next == ']') {
                    closed = true;
                } else if (next == ',') {
                    window_.peek_nonspace();
                } else if (next == -1) {
                    invalid("the document ends inside the event array", batch_end);
                } else {
                    invalid("expected ',' or ']' after a trace event", batch_end);
                }
            }
            parser_.add_events(window_.text(batch_begin, batch_end), window_.bytes_read());
            window_.release();
        }
    }

    JsonWindow window_;
    ChromeTraceParser parser_;
    ForeignTrace& out_;
    bool found_events_ = false;
};

// The whole text in one buffer, padded as simdjson needs (the padding zeroed, the rest not
// initialised first: a trace's tens of MB are written once, by the read).
// Anonymous memory asked for in huge pages where the kernel gives them (transparent huge pages in
// "madvise" mode): tens of MB of text in 4 KiB pages cost a page fault each 4 KiB.
struct MappedBytes {
    char* bytes = nullptr;
    size_t length = 0;
    MappedBytes() = default;
    explicit MappedBytes(size_t n) : length(n) {
        void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        ::madvise(p, n, MADV_HUGEPAGE);
        bytes = static_cast<char*>(p);
    }
    MappedBytes(MappedBytes&& other) noexcept : bytes(std::exchange(other.bytes, nullptr)), length(other.length) {}
    MappedBytes& operator=(MappedBytes&& other) noexcept {
        std::swap(bytes, other.bytes);
        std::swap(length, other.length);
        return *this;
    }
    ~MappedBytes() {
        if (bytes) ::munmap(bytes, length);
    }
    char* get() const { return bytes; }
    void reset() { *this = MappedBytes(); }
    explicit operator bool() const { return bytes != nullptr; }
};

struct WholeText {
    MappedBytes data;
    size_t size = 0;
    size_t capacity = 0;  // bytes of text that fit before the padding
    bool complete = false;
};

void grow(WholeText& text, size_t capacity) {
    MappedBytes bigger(capacity + simdjson::SIMDJSON_PADDING);
    if (text.size > 0) std::memcpy(bigger.get(), text.data.get(), text.size);
    text.data = std::move(bigger);
    text.capacity = capacity;
}

// Reads the source to its end when the text is at most `max_bytes` (the size hint, if right, is the
// one allocation). When more comes, `complete` is false and what was read is the text's head.
WholeText read_whole(ByteSource& source, uint64_t max_bytes) {
    WholeText text;
    grow(text, static_cast<size_t>(std::min(source.size_hint(), max_bytes)) + 1);  // +1: sees the end
    for (;;) {
        if (text.size == text.capacity) {
            if (text.size > max_bytes) return text;
            grow(text, static_cast<size_t>(
                           std::min<uint64_t>(std::max<uint64_t>(text.size * 2, kBatchBytes), max_bytes + 1)));
        }
        const size_t got = source.read(text.data.get() + text.size, text.capacity - text.size);
        if (got == 0) break;
        text.size += got;
    }
    std::memset(text.data.get() + text.size, 0, text.capacity - text.size + simdjson::SIMDJSON_PADDING);
    text.complete = true;
    return text;
}

// The head read_whole gave up on, then the rest of the source; the head is freed once handed out,
// so the stream that reads this holds its bounded window, not the head too.
class HeadThenRest final : public ByteSource {
public:
    HeadThenRest(WholeText head, ByteSource& rest) : head_(std::move(head)), rest_(rest) {}
    size_t read(char* into, size_t n) override {
        if (!head_.data) return rest_.read(into, n);
        const size_t take = std::min(n, head_.size - offset_);
        std::memcpy(into, head_.data.get() + offset_, take);
        offset_ += take;
        if (offset_ == head_.size) head_.data.reset();
        return take;
    }

private:
    WholeText head_;
    size_t offset_ = 0;
    ByteSource& rest_;
};

// An object (Kineto's) or an array of events is walked whole; anything else (a memory timeline's
// array of rows, no JSON at all) goes through the stream, which says what it is.
bool walks_whole(const WholeText& text) {
    const char* p = text.data.get();
    const char* const end = p + text.size;
    const auto skip_space = [&p, end] {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    };
    skip_space();
    if (p == end) return false;
    if (*p == '{') return true;
    if (*p++ != '[') return false;
    skip_space();
    return p < end && *p != '[';
}

}  // namespace

TextPath parse_trace_stream(ByteSource& source, ForeignTrace& out, const ParseProgress& progress,
                            uint64_t whole_text_max_bytes) {
    const uint64_t hint = source.size_hint();
    if (hint == 0 || hint > whole_text_max_bytes) {
        TraceStreamReader(source, out, progress).read();
        return TextPath::streamed;
    }
    WholeText text = read_whole(source, whole_text_max_bytes);
    if (!text.complete) {
        HeadThenRest chained(std::move(text), source);
        TraceStreamReader(chained, out, progress).read();
        return TextPath::streamed;
    }
    if (walks_whole(text)) {
        ForeignTrace parsed;
        bool ok = false;
        {
            ChromeTraceParser parser(parsed, progress);
            ok = parser.parse_whole(text.data.get(), text.size, text.capacity + simdjson::SIMDJSON_PADDING);
        }
        if (ok) {
            out = std::move(parsed);
            return TextPath::whole;
        }
    }
    // Not a trace the walk takes: the stream reads it again for its own verdict (its messages).
    MemorySource memory({text.data.get(), text.size});
    TraceStreamReader(memory, out, progress).read();
    return TextPath::streamed;
}

}  // namespace tbdprof::interop
