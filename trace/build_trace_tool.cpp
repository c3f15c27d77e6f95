// tbdprof-build-trace RUN_DIR OUTPUT: builds a trace from raw files kept with TBDPROF_KEEP_RUN_DIR=1.
// For debugging the builder and for the benchmark (prints events and seconds).
#include <tbdprof/trace/builder.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: tbdprof-build-trace RUN_DIR OUTPUT\n");
        return 2;
    }
    tbdprof::trace::BuildOptions options;
    options.run_dir = argv[1];
    options.output = argv[2];
    const tbdprof::trace::BuildResult result = tbdprof::trace::build_trace(options);
    for (const std::string& warning : result.warnings) std::fprintf(stderr, "note: %s\n", warning.c_str());
    if (!result.ok) {
        std::fprintf(stderr, "tbdprof-build-trace: %s\n", result.error.c_str());
        return 1;
    }
    std::printf("raw_files=%llu events=%llu kernels=%llu copies=%llu sets=%llu allocations=%llu edges=%llu "
                "seconds=%.3f events_per_second=%.0f\n",
                static_cast<unsigned long long>(result.raw_files), static_cast<unsigned long long>(result.events),
                static_cast<unsigned long long>(result.kernels), static_cast<unsigned long long>(result.copies),
                static_cast<unsigned long long>(result.sets), static_cast<unsigned long long>(result.allocations),
                static_cast<unsigned long long>(result.edges), result.seconds,
                result.seconds > 0 ? static_cast<double>(result.events) / result.seconds : 0.0);
    return 0;
}
