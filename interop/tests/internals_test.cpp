// Unit tests of the importer's building blocks (headers from interop/src).
#include "chrome_stream.h"
#include "json_scan.h"
#include "memory_matching.h"
#include "memory_timeline_parser.h"
#include "tbdprof/interop/interop_error.h"
#include "time_order.h"
#include "time_text.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>

using namespace tbdprof::interop;

TEST_CASE("microsecond text to nanoseconds, without floating-point rounding") {
    CHECK(microseconds_text_to_ns("1712195495505543.2") == 1712195495505543200);
    CHECK(microseconds_text_to_ns("1712195495505543.25") == 1712195495505543250);
    CHECK(microseconds_text_to_ns("1669783687389324") == 1669783687389324000);
    CHECK(microseconds_text_to_ns("63.813") == 63813);
    CHECK(microseconds_text_to_ns("0.0005") == 1);  // rounds half up
    CHECK(microseconds_text_to_ns("0.0004") == 0);
    CHECK(microseconds_text_to_ns("-4") == -4000);
    CHECK(microseconds_text_to_ns("1.5e3") == 1500000);
    CHECK(microseconds_text_to_ns(" 12 \n") == 12000);
    CHECK(!microseconds_text_to_ns("abc"));
    CHECK(!microseconds_text_to_ns(""));
    CHECK(!microseconds_text_to_ns("1.2.3"));
    CHECK(!microseconds_text_to_ns("99999999999999999"));  // overflows int64 ns
}

namespace {

// The conversion as it was written before its one-pass form (two passes and a memchr for the dot):
// the reference the one-pass form must agree with on every text.
std::optional<int64_t> two_pass_microseconds_to_ns(std::string_view text) {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!text.empty() && space(text.front())) text.remove_prefix(1);
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
    if (text.empty()) return std::nullopt;
    const std::string_view whole = text;
    bool negative = false;
    if (text.front() == '-' || text.front() == '+') {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || !digit(text.front())) return std::nullopt;
    for (char c : text)
        if (c == 'e' || c == 'E') return microseconds_text_to_ns(whole);  // the same double path
    const size_t dot = text.find('.');
    const std::string_view integer = text.substr(0, dot);
    const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    if (integer.size() > 16) return std::nullopt;
    int64_t us = 0;
    for (char c : integer) {
        if (!digit(c)) return std::nullopt;
        us = us * 10 + (c - '0');
    }
    if (us > 9'223'372'036'854'774) return std::nullopt;
    int64_t ns_part = 0;
    int digits = 0;
    bool round_up = false;
    for (char c : fraction) {
        if (!digit(c)) return std::nullopt;
        if (digits < 3) ns_part = ns_part * 10 + (c - '0');
        if (digits == 3) round_up = c >= '5';
        ++digits;
    }
    for (int d = digits; d < 3; ++d) ns_part *= 10;
    const int64_t ns = us * 1000 + ns_part + (round_up ? 1 : 0);
    return negative ? -ns : ns;
}

}  // namespace

TEST_CASE("microsecond text to nanoseconds in one pass: what the two-pass reading gave, on 200,000 texts") {
    // Texts of digits, dots, exponents, signs and spaces, 0 to 24 characters: numbers, near-numbers
    // and long digit runs (past 16 integer digits: refused, unless an exponent makes them a double).
    const std::string alphabet = "0123456789012345678901234567890123456789..eE+- \nx";
    uint64_t state = 88172645463325252ull;
    const auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    size_t differ = 0, numbers = 0;
    for (int i = 0; i < 200000; ++i) {
        std::string text;
        const size_t length = next() % 25;
        for (size_t c = 0; c < length; ++c) text += alphabet[next() % alphabet.size()];
        const std::optional<int64_t> got = microseconds_text_to_ns(text);
        differ += got != two_pass_microseconds_to_ns(text);
        numbers += got.has_value();
    }
    CHECK(differ == 0);
    CHECK(numbers > 20000);  // the texts reached the conversion, not only its refusals
    CHECK(microseconds_text_to_ns("10000000000000000e-6") == 10000000000000);  // 17 digits, then an exponent
    CHECK(microseconds_text_to_ns("1 e") == std::nullopt);
    CHECK(microseconds_text_to_ns("12.") == 12000);
}

namespace {

MemoryEvent gpu_event(int64_t ts, int64_t bytes, std::optional<int64_t> address = std::nullopt) {
    MemoryEvent e;
    e.time_ns = ts;
    e.device_type = 1;
    e.device_id = 0;
    e.bytes = bytes;
    e.address = address;
    return e;
}

}  // namespace

TEST_CASE("memory matching by address") {
    std::vector<MemoryEvent> events = {gpu_event(30, -100, 0x1000), gpu_event(10, 100, 0x1000),
                                       gpu_event(20, 50, 0x2000), gpu_event(40, -70, 0x9000),
                                       gpu_event(50, 64, 0x2000)};
    MemoryEvent cpu = gpu_event(15, 8, 0x3);
    cpu.device_type = 0;
    events.push_back(cpu);
    const MatchResult r = match_allocations(events, 5);
    CHECK(r.by_address);
    CHECK(r.gpu_events == 5);
    REQUIRE(r.allocations.size() == 4);
    CHECK(r.allocations[0].address == 0x1000);  // events were sorted by time first
    CHECK(r.allocations[0].free_ns == 30);
    CHECK(r.allocations[1].address == 0x2000);
    CHECK(r.allocations[1].free_ns == 50);  // its free was missing: ended by the next block there
    CHECK(r.warnings.at("allocations at a live address (previous one ended there)") == 1);
    CHECK(r.allocations[2].preexisting);
    CHECK(r.allocations[2].alloc_ns == 5);
    CHECK(r.preexisting == 1);
    CHECK(!r.allocations[3].free_ns);
}

TEST_CASE("memory matching by size keeps the live total exact") {
    std::vector<MemoryEvent> events = {gpu_event(1, 100),  gpu_event(2, 200),  gpu_event(3, 100),
                                       gpu_event(4, -100), gpu_event(5, -200), gpu_event(6, -300)};
    const MatchResult r = match_allocations(events, 0);
    CHECK(!r.by_address);
    REQUIRE(r.allocations.size() == 4);
    // The free of 100 closes the latest live block of 100 (the third event).
    CHECK(r.allocations[2].free_ns == 4);
    CHECK(!r.allocations[0].free_ns);
    CHECK(r.allocations[1].free_ns == 5);
    CHECK(r.allocations[3].preexisting);
    CHECK(r.allocations[3].bytes == 300);
    for (const MatchedAllocation& a : r.allocations) CHECK(a.address < 0);  // synthetic, distinct
    CHECK(r.allocations[0].address != r.allocations[1].address);
    // Live bytes at t = 4.5: blocks alive then are #0 (100), #1 (200), #3 (300, preexisting).
    int64_t live = 0;
    for (const MatchedAllocation& a : r.allocations) {
        if (a.alloc_ns <= 4 && (!a.free_ns || *a.free_ns > 4)) live += a.bytes;
    }
    CHECK(live == 600);
}

TEST_CASE("torch memory categories map onto tbdprof's") {
    CHECK(torch_memory_category(0) == "weights");
    CHECK(torch_memory_category(1) == "optimizer_state");
    CHECK(torch_memory_category(2) == "input");
    CHECK(torch_memory_category(3) == "workspace");
    CHECK(torch_memory_category(4) == "activations");
    CHECK(torch_memory_category(5) == "gradients");
    CHECK(torch_memory_category(6) == "other");
    CHECK(!torch_memory_category(7));
}

TEST_CASE("memory allocated before the trace and never freed becomes one block live throughout") {
    // Kineto says 1000 bytes were allocated in all after the first event, of which this trace saw
    // 100: 900 predate it. A later free of 300 unseen bytes accounts for part of those.
    std::vector<MemoryEvent> events = {gpu_event(10, 100, 0x10), gpu_event(20, -300, 0x20), gpu_event(30, -100, 0x10)};
    events[0].total_allocated = 1000;
    events[1].total_allocated = 700;
    events[2].total_allocated = 600;
    const MatchResult r = match_allocations(events, 0);
    CHECK(r.warnings.empty());
    REQUIRE(r.untracked_bytes.count(0) == 1);
    CHECK(r.untracked_bytes.at(0) == 600);
    REQUIRE(r.allocations.size() == 3);
    CHECK(r.allocations[2].bytes == 600);
    CHECK(r.allocations[2].alloc_ns == 0);
    CHECK(!r.allocations[2].free_ns);
    // Live at t = 15 is 100 + 300 (freed at 20, live from the start) + 600 = Kineto's 1000.
    int64_t live = 0;
    for (const MatchedAllocation& a : r.allocations) {
        if (a.alloc_ns <= 15 && (!a.free_ns || *a.free_ns > 15)) live += a.bytes;
    }
    CHECK(live == 1000);
}

namespace {

enum class ScanKind { bytewise, sse2, chosen };

// Where the container opening text[0] ends (the offset after its closing bracket; 0: not in the
// text), fed in pieces cut at `cuts`, by the scan `kind`. With elements_from > 0 the text starts
// inside an array instead: where the first element ending at or after that offset ends, or after
// the array's closing bracket (as JsonWindow::elements_end asks).
size_t container_end_in_pieces(const std::string& text, const std::vector<size_t>& cuts, ScanKind kind,
                               size_t elements_from = 0) {
    ContainerScan scan;
    if (elements_from > 0) scan.depth = 1;
    size_t from = 0;
    for (size_t i = 0; i <= cuts.size(); ++i) {
        const size_t to = i < cuts.size() ? cuts[i] : text.size();
        const char* p = text.data() + from;
        const char* stop = text.data() + to;
        const bool in_reach = elements_from > 0 && elements_from <= to;
        scan.element_depth = in_reach ? 1 : 0;
        scan.elements_from = in_reach ? text.data() + elements_from : nullptr;
        const char* end = kind == ScanKind::bytewise ? find_container_end_bytewise(p, stop, scan)
                          : kind == ScanKind::sse2   ? find_container_end_sse2(p, stop, scan)
                                                     : find_container_end(p, stop, scan);
        if (end) return static_cast<size_t>(end - text.data());
        from = to;
    }
    return 0;
}

}  // namespace

TEST_CASE("the block scan for a container's end agrees with the bytewise one") {
    // Texts of brackets, quotes, backslashes and filler, long enough for several 64-byte blocks, cut
    // into pieces anywhere: strings, escapes and depth carry across blocks and pieces.
    std::mt19937 random(23);
    const std::string alphabet = "{}[]\\\"\"\"aaaaaaaaaaaaaaaaaaaaaa ,:";
    size_t ended = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string text = (round % 2) ? "{" : "[";
        const size_t length = random() % 400;
        for (size_t i = 0; i < length; ++i) {
            char c = alphabet[random() % alphabet.size()];
            if (c == '\\' && round % 3 == 0) c = 'a';  // a third without escapes: the blocks' fast path
            text += c;
        }
        std::vector<size_t> cuts;
        for (size_t at = random() % 100; at < text.size(); at += 1 + random() % 150) cuts.push_back(at);
        const size_t expected = container_end_in_pieces(text, {}, ScanKind::bytewise);
        INFO("text: " << text);
        CHECK(container_end_in_pieces(text, cuts, ScanKind::bytewise) == expected);
        for (const ScanKind kind : {ScanKind::sse2, ScanKind::chosen}) {
            CHECK(container_end_in_pieces(text, cuts, kind) == expected);
            CHECK(container_end_in_pieces(text, {}, kind) == expected);
        }
        ended += expected != 0;
        // The same text as elements of an open array (its first byte an element's), wanted from
        // anywhere in it: the batch cut's scan.
        const size_t elements_from = 1 + random() % text.size();
        const size_t element_end = container_end_in_pieces(text, {}, ScanKind::bytewise, elements_from);
        CHECK((element_end == 0 || element_end >= elements_from || text[element_end - 1] == ']' ||
               text[element_end - 1] == '}'));
        for (const ScanKind kind : {ScanKind::sse2, ScanKind::chosen}) {
            CHECK(container_end_in_pieces(text, cuts, kind, elements_from) == element_end);
            CHECK(container_end_in_pieces(text, {}, kind, elements_from) == element_end);
        }
    }
    CHECK(ended > 1000);  // the texts exercised closed containers, not only unfinished ones

    // A real event: the brackets inside its strings do not count, an escaped quote does not end one.
    const std::string event = R"({"name": "a[0]{\"x\"}", "args": {"grid": [1, 2, 3]}, "s": "\\"} , {"next": 1})";
    const size_t end = event.find(" , {");
    for (const ScanKind kind : {ScanKind::sse2, ScanKind::chosen}) {
        CHECK(container_end_in_pieces(event, {}, kind) == end);
        CHECK(container_end_in_pieces(event + std::string(200, ' '), {}, kind) == end);
        CHECK(container_end_in_pieces(std::string(1, '{') + std::string(100, ' '), {}, kind) == 0);
    }
    // As elements: the first event ends before offset 10 is reached, so the scan goes on to the
    // second; the array's ']' ends it when it comes first.
    const std::string events = event + std::string(100, ' ') + "]";
    for (const ScanKind kind : {ScanKind::bytewise, ScanKind::sse2, ScanKind::chosen}) {
        CHECK(container_end_in_pieces(events, {}, kind, end) == end);
        CHECK(container_end_in_pieces(events, {}, kind, end + 1) == event.size());
        CHECK(container_end_in_pieces(events, {}, kind, event.size() + 1) == events.size());
    }
}

namespace {

// A trace of `count` complete events, 1 us apart, with `separator` after event `odd_one` instead of
// ", " (and nothing after the last event when it is ""), each event's offset in `offsets`.
std::string event_array(size_t count, size_t odd_one, const std::string& separator, std::vector<size_t>& offsets) {
    std::string text = "{\"traceEvents\": [";
    for (size_t i = 0; i < count; ++i) {
        offsets.push_back(text.size());
        text += R"({"ph": "X", "cat": "cpu_op", "name": "aten::op[)" + std::to_string(i % 7) +
                R"(]{", "pid": 1, "tid": 2, "ts": )" + std::to_string(1000 + i) +
                R"(, "dur": 1, "args": {"grid": [1, 2, 3], "labels": "a}]b"}})";
        if (i + 1 < count) text += i == odd_one ? separator : ", ";
    }
    if (odd_one != count - 1 || !separator.empty()) text += "]}";
    return text;
}

std::string parse_error(const std::string& text) {
    MemorySource source(text);
    ForeignTrace trace;
    try {
        parse_trace_stream(source, trace);
    } catch (const InteropError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("batches of events cut by one scan: every event once, in order; errors as the event-by-event cut's") {
    // About 3.5 MB: batches of ~1 MiB, so cuts fall between events in mid-text.
    constexpr size_t kEvents = 22000;
    std::vector<size_t> offsets;
    const std::string text = event_array(kEvents, kEvents, "", offsets);
    REQUIRE(text.size() > (3u << 20));
    MemorySource source(text);
    ForeignTrace trace;
    parse_trace_stream(source, trace);
    CHECK(trace.events == kEvents);
    REQUIRE(trace.ranges.size() == kEvents);
    bool in_order = true;
    for (size_t i = 0; i < kEvents; ++i)
        in_order = in_order && trace.ranges[i].begin_ns == static_cast<int64_t>(1000 + i) * 1000;
    CHECK(in_order);

    // The messages (and byte offsets) the event-by-event cut gives, past the first batch. Event
    // 12000 ends at the offset of event 12001 less the separator's 2 bytes.
    std::vector<size_t> at;
    const std::string no_comma = event_array(kEvents, 12000, " ", at);
    CHECK(parse_error(no_comma) ==
          "invalid JSON: expected ',' or ']' after a trace event at byte " + std::to_string(at[12001] - 1));
    at.clear();
    const std::string cut_after_event = event_array(kEvents, kEvents - 1, "", at);
    CHECK(parse_error(cut_after_event) ==
          "invalid JSON: the document ends inside the event array at byte " + std::to_string(cut_after_event.size()));
    at.clear();
    std::string trailing_comma = event_array(kEvents, kEvents, "", at);
    trailing_comma.insert(trailing_comma.size() - 2, ",");
    CHECK(parse_error(trailing_comma) ==
          "invalid JSON: expected a value at byte " + std::to_string(trailing_comma.size() - 2) + ", found ']'");
}

TEST_CASE("times ordered by the radix sort as a stable sort by time orders them") {
    // Sizes around nothing to sort, spans from none (every time equal) to the whole int64 range,
    // negative times, and ties by the dozen (each must keep the order given).
    std::mt19937_64 random(23);
    for (const size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{97}, size_t{5000}, size_t{70000}}) {
        for (const uint64_t span :
             {uint64_t{0}, uint64_t{40}, uint64_t{1} << 20, uint64_t{1} << 33, uint64_t{1} << 44, ~uint64_t{0}}) {
            std::vector<TimeKey> keys(count);
            for (size_t i = 0; i < count; ++i) {
                const uint64_t offset = span == ~uint64_t{0} ? random() : (span ? random() % (span + 1) : 0);
                keys[i] = {static_cast<int64_t>(offset - (span / 2)), i};
            }
            std::vector<TimeKey> expected = keys;
            std::stable_sort(expected.begin(), expected.end(),
                             [](const TimeKey& a, const TimeKey& b) { return a.time_ns < b.time_ns; });
            stable_sort_by_time(keys);
            bool same = true;
            for (size_t i = 0; i < count; ++i)
                same = same && keys[i].time_ns == expected[i].time_ns && keys[i].index == expected[i].index;
            CHECK_MESSAGE(same, count << " keys over a span of " << span);
        }
    }
}

TEST_CASE("integer args read by their exact keys, escaped or not; keys of the same length that differ are not") {
    const std::string text = R"({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
         "args": {"devicE": 5, "device": 1, "Stream": 3, "stream": 7, "correlatioN": 1, "correlation": 99,
                  "shared memorY": 1, "shared memory": 256, "Device Type": 1}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "c", "pid": 0, "tid": 7, "ts": 20, "dur": 2,
         "args": {"Bytes": 1, "bytes": 4096, "bytez": 2}},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 5,
         "args": {"Device Type": 1, "Device id": 9, "Device Id": 3, "Addr": 4096, "addr": 1, "Bytes": 512,
                  "Total Allocated": 1024, "Total allocated": 1, "Total Reserved": 2048, "Total ReserveD": 1}},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 6,
         "args": {"Add\u0072": 8192, "Byte\u0073": -512, "Device\u0020Type": 1}}
    ]})";
    MemorySource source(text);
    ForeignTrace trace;
    parse_trace_stream(source, trace);
    REQUIRE(trace.gpu_ops.size() == 2);
    const GpuOp& kernel = trace.gpu_ops[0];
    CHECK(kernel.device == 1);
    CHECK(kernel.stream == 7);
    CHECK(kernel.correlation == 99);
    CHECK(kernel.shared_bytes == 256);
    CHECK(trace.gpu_ops[1].bytes == 4096);
    REQUIRE(trace.memory.size() == 2);
    const MemoryEvent& allocated = trace.memory[0];
    CHECK(allocated.device_type == 1);
    CHECK(allocated.device_id == 3);
    CHECK(allocated.address == 4096);
    CHECK(allocated.bytes == 512);
    CHECK(allocated.total_allocated == 1024);
    CHECK(allocated.total_reserved == 2048);
    const MemoryEvent& freed = trace.memory[1];
    CHECK(freed.address == 8192);
    CHECK(freed.bytes == -512);
    CHECK(freed.device_type == 1);
    CHECK(freed.device_id == -1);
}
