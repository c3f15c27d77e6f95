// libFuzzer target: a .sqlite file given to any tbdprof command, through the one trace opener
// (tbdprof/trace/trace_reader.h) and the summary queries `tbdprof` runs on a trace. Damaged or hostile
// files must end in TraceOpenError or SqliteError, never a crash, a hang or a sanitizer report.
#include <tbdprof/trace/trace_reader.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string path = [] {
        std::string pattern =
            std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tbdprof-fuzz-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr) std::abort();
        return pattern + "/trace.sqlite";
    }();
    if (std::FILE* file = std::fopen(path.c_str(), "wb")) {
        std::fwrite(data, 1, size, file);
        std::fclose(file);
    } else {
        return 0;
    }
    try {
        tbdprof::trace::Database db = tbdprof::trace::open_trace(path);
        (void)tbdprof::trace::read_summary(db);
    } catch (const std::exception&) {
        // refused: the expected outcome for most inputs
    }
    std::remove(path.c_str());
    return 0;
}
