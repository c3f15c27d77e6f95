// Parses the pieces of a Chrome trace (Kineto's flavour included) into a ForeignTrace with
// simdjson On-Demand: batches of trace events and the top-level keys' values, each from its own
// text, which the streaming reader (chrome_stream.cpp) cuts out of the input. Each event object's
// fields are visited once in whatever order they come, no DOM.
#pragma once

#include "foreign_trace.h"

#include <simdjson.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tbdprof::interop {

class EventSink;

// Called every 65536 events with the count so far and the JSON bytes read so far.
using ParseProgress = std::function<void(uint64_t events, uint64_t json_bytes)>;

// Throws InteropError("invalid JSON: ...") when a piece is not JSON; bad events are counted in
// out.warnings / out.unknown and skipped.
class ChromeTraceParser {
public:
    ChromeTraceParser(ForeignTrace& out, const ParseProgress& progress);
    ~ChromeTraceParser();
    ChromeTraceParser(const ChromeTraceParser&) = delete;
    ChromeTraceParser& operator=(const ChromeTraceParser&) = delete;

    // One or more elements of the traceEvents array, with the commas between them.
    void add_events(std::string_view events, uint64_t json_bytes_so_far);
    // A top-level key (other than traceEvents) and its value's text.
    void add_top_level(const std::string& key, std::string_view value);
    // A JSON string's text, quotes included -> its unescaped value.
    std::string unescape_key(std::string_view quoted);
    // Once every event is in: the format's name.
    void finish(uint64_t json_bytes);

private:
    simdjson::ondemand::document iterate_as_array(std::string_view values);

    ForeignTrace& out_;
    const ParseProgress& progress_;
    std::unique_ptr<EventSink> sink_;
    simdjson::ondemand::parser parser_;
    std::vector<char> batch_;  // the text being parsed, padded as simdjson needs
};

}  // namespace tbdprof::interop
