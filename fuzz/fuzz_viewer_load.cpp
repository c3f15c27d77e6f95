// libFuzzer target: a .sqlite file opened in the viewer, through its loader (viewer/core/trace_loader.h):
// the overview (rows of copies and NVTX ranges, iterations, allocations, tensors) and the kernels with
// their level-of-detail summaries, the stages the viewer reads before it draws. Hostile rows (times
// near the int64 limits, 100 000 streams, inverted ranges) must end in a LoadError or a bounded
// model, never a crash, a hang (a run near INT64_MAX spun for ever) or a sanitizer report.
#include "fuzz_input_file.h"
#include "trace_loader.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = write_fuzz_input(data, size, "trace.sqlite");
    if (path.empty()) return 0;
    try {
        const auto overview = tbdprof::viewer::load_overview(path);
        const std::atomic<bool> cancel{false};
        (void)tbdprof::viewer::load_kernels(path, overview->duration_ns, cancel, {});
    } catch (const std::exception&) {
        // LoadError (refused) and the analyzer's errors: the expected outcome for most inputs
    }
    std::remove(path.c_str());
    return 0;
}
