// Unit tests of the importer's building blocks (headers from interop/src).
#include "json_scan.h"
#include "memory_matching.h"
#include "memory_timeline_parser.h"
#include "time_text.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace tbdprof::interop;

TEST_CASE("microsecond text to nanoseconds, without floating-point rounding") {
    CHECK(microseconds_text_to_ns("1712195495505543.2") == 1712195495505543200);
    CHECK(microseconds_text_to_ns("1712195495505543.25") == 1712195495505543250);
    CHECK(microseconds_text_to_ns("1669783687389324") == 1669783687389324000);
    CHECK(microseconds_text_to_ns("63.813") == 63813);
    CHECK(microseconds_text_to_ns("0.0005") == 1);   // rounds half up
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
    std::vector<MemoryEvent> events = {gpu_event(30, -100, 0x1000), gpu_event(10, 100, 0x1000), gpu_event(20, 50, 0x2000),
                                       gpu_event(40, -70, 0x9000), gpu_event(50, 64, 0x2000)};
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
    std::vector<MemoryEvent> events = {gpu_event(1, 100), gpu_event(2, 200), gpu_event(3, 100), gpu_event(4, -100),
                                       gpu_event(5, -200), gpu_event(6, -300)};
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

// Where the container opening text[0] ends (the offset after its closing bracket; 0: not in the
// text), fed in pieces cut at `cuts`, by the block scan or the bytewise one.
size_t container_end_in_pieces(const std::string& text, const std::vector<size_t>& cuts, bool bytewise) {
    ContainerScan scan;
    size_t from = 0;
    for (size_t i = 0; i <= cuts.size(); ++i) {
        const size_t to = i < cuts.size() ? cuts[i] : text.size();
        const char* p = text.data() + from;
        const char* stop = text.data() + to;
        const char* end = bytewise ? find_container_end_bytewise(p, stop, scan) : find_container_end(p, stop, scan);
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
        const size_t expected = container_end_in_pieces(text, {}, true);
        INFO("text: " << text);
        CHECK(container_end_in_pieces(text, cuts, true) == expected);
        CHECK(container_end_in_pieces(text, cuts, false) == expected);
        CHECK(container_end_in_pieces(text, {}, false) == expected);
        ended += expected != 0;
    }
    CHECK(ended > 1000);  // the texts exercised closed containers, not only unfinished ones

    // A real event: the brackets inside its strings do not count, an escaped quote does not end one.
    const std::string event = R"({"name": "a[0]{\"x\"}", "args": {"grid": [1, 2, 3]}, "s": "\\"} , {"next": 1})";
    const size_t end = event.find(" , {");
    CHECK(container_end_in_pieces(event, {}, false) == end);
    CHECK(container_end_in_pieces(event + std::string(200, ' '), {}, false) == end);
    CHECK(container_end_in_pieces(std::string(1, '{') + std::string(100, ' '), {}, false) == 0);
}
