// An import reports progress through the caller's callback (ImportOptions::progress), which tbdprof
// draws as its progress line: each stage with the fraction done (< 0: unknown), then an empty stage
// once the import is over, done or failed.
#include "sample_traces.h"
#include "tbdprof/interop/import.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace tbdprof::interop;
using namespace tbdprof::interop::test;

namespace {

struct Call {
    std::string stage;
    double fraction;
};

ImportOptions recording(std::vector<Call>& calls) {
    ImportOptions options;
    options.progress = [&calls](std::string_view stage, double fraction) {
        calls.push_back({std::string(stage), fraction});
    };
    return options;
}

// The index of the first call whose stage starts with `prefix` (is empty, for an empty prefix);
// calls.size() when none.
size_t first(const std::vector<Call>& calls, std::string_view prefix) {
    for (size_t i = 0; i < calls.size(); ++i) {
        const std::string_view stage = calls[i].stage;
        if (prefix.empty() ? stage.empty() : stage.substr(0, prefix.size()) == prefix) return i;
    }
    return calls.size();
}

}  // namespace

TEST_CASE("import progress: reading, writing, tagging in that order, fractions in [0, 1], then the end") {
    TempDir dir;
    write_gzip(dir.file("t.json.gz"), current_layout_trace());
    std::vector<Call> calls;
    const ImportSummary s = import_trace_file(dir.file("t.json.gz"), dir.file("t.sqlite"), recording(calls));
    CHECK(s.kernels == 3);  // the callback changes nothing of the import

    const size_t reading = first(calls, "reading "), writing = first(calls, "writing " + dir.file("t.sqlite"));
    const size_t tagging = first(calls, "tagging memory"), end = first(calls, "");
    CHECK(reading < writing);
    CHECK(writing < tagging);
    CHECK(tagging < end);
    REQUIRE(end < calls.size());
    CHECK(calls.back().stage.empty());
    for (size_t i = 0; i < end; ++i) CHECK(calls[i].fraction <= 1.0);
    for (size_t i = end; i < calls.size(); ++i) CHECK(calls[i].stage.empty());  // nothing after the end
}

TEST_CASE("import progress: the end is reported when the import fails") {
    TempDir dir;
    write_text(dir.file("bad.json"), "{\"traceEvents\": [");
    std::vector<Call> calls;
    CHECK_THROWS(import_trace_file(dir.file("bad.json"), dir.file("bad.sqlite"), recording(calls)));
    REQUIRE(!calls.empty());
    CHECK(calls.back().stage.empty());
    CHECK(first(calls, "writing ") == calls.size());  // it failed before writing
}
