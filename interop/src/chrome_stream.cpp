#include "chrome_stream.h"

#include "input_file.h"
#include "memory_timeline_parser.h"
#include "tbdprof/interop/interop_error.h"

#include <optional>
#include <string>

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

    // Where a batch of events ends and whether the array closes there.
    struct BatchCut {
        uint64_t end = 0;
        bool closed = false;
    };

    // The elements of an array whose '[' was passed, a batch at a time, through its ']'. Each batch
    // is cut by one scan (JsonWindow::elements_end); where that finds something amiss (the input
    // ends, no ',' or ']' after the batch) or simdjson rejects the batch, the event-by-event cut
    // decides, so that errors are found and worded as before.
    void read_events() {
        const int next = window_.peek_nonspace();
        window_.release();
        if (next == ']') return window_.advance(1);
        for (bool closed = false; !closed;) {
            const uint64_t batch_begin = window_.cursor();
            std::optional<BatchCut> cut = cut_at_once();
            if (!cut) {
                window_.seek(batch_begin);
                cut = cut_event_by_event(batch_begin);
            }
            try {
                parser_.add_events(window_.text(batch_begin, cut->end), window_.bytes_read());
            } catch (const InteropError&) {
                window_.seek(batch_begin);
                cut_event_by_event(batch_begin);  // throws the event-by-event cut's error, which came first
                throw;
            }
            closed = cut->closed;
            window_.release();
        }
    }

    std::optional<BatchCut> cut_at_once() {
        uint64_t batch_end = 0;
        if (!window_.elements_end(kBatchBytes, batch_end)) return std::nullopt;
        window_.seek(batch_end);
        const int next = window_.peek_nonspace();
        if (next != ']' && next != ',') return std::nullopt;
        window_.advance(1);
        if (next == ',') window_.peek_nonspace();
        return BatchCut{batch_end, next == ']'};
    }

    // Event by event: the end of each found and what follows it checked, until the batch is full.
    BatchCut cut_event_by_event(uint64_t batch_begin) {
        BatchCut cut{batch_begin, false};
        while (!cut.closed && cut.end - batch_begin < kBatchBytes) {
            window_.advance(window_.value_length());
            cut.end = window_.cursor();
            const int next = window_.peek_nonspace();
            window_.advance(1);
            if (next == ']') {
                cut.closed = true;
            } else if (next == ',') {
                window_.peek_nonspace();
            } else if (next == -1) {
                invalid("the document ends inside the event array", cut.end);
            } else {
                invalid("expected ',' or ']' after a trace event", cut.end);
            }
        }
        return cut;
    }

    JsonWindow window_;
    ChromeTraceParser parser_;
    ForeignTrace& out_;
    bool found_events_ = false;
};

}  // namespace

void parse_trace_stream(ByteSource& source, ForeignTrace& out, const ParseProgress& progress) {
    TraceStreamReader(source, out, progress).read();
}

}  // namespace tbdprof::interop
