// libFuzzer target: a .sqlite file given to any tbdprof command, through the one trace opener
// (tbdprof/trace/trace_reader.h) and the summary queries `tbdprof` runs on a trace. Damaged or hostile
// files must end in TraceOpenError or SqliteError, never a crash, a hang or a sanitizer report.
#include "fuzz_input_file.h"
#include <tbdprof/trace/trace_reader.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = write_fuzz_input(data, size, "trace.sqlite");
    if (path.empty()) return 0;
    try {
        tbdprof::trace::Database db = tbdprof::trace::open_trace(path);
        (void)tbdprof::trace::read_summary(db);
    } catch (const std::exception&) {
        // refused: the expected outcome for most inputs
    }
    std::remove(path.c_str());
    return 0;
}
