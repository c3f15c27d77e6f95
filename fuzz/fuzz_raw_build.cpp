// libFuzzer target: a raw event file (raw-<pid>.tbdraw, what the collector writes) as the builder
// reads it after a run, through the whole build: reader, decoding, pairing, the SQLite writer. A raw
// file may be cut anywhere or hold any bytes (a crashed or hostile process); the build must end in a
// trace or one error, never a crash, a hang or a sanitizer report.
#include <tbdprof/trace/builder.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

const std::string& work_dir() {
    static const std::string dir = [] {
        std::string pattern =
            std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tbdprof-fuzz-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr) std::abort();
        return pattern;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string raw = work_dir() + "/raw-1.tbdraw";
    const std::string out = work_dir() + "/trace.sqlite";
    if (std::FILE* file = std::fopen(raw.c_str(), "wb")) {
        std::fwrite(data, 1, size, file);
        std::fclose(file);
    } else {
        return 0;
    }
    tbdprof::trace::BuildOptions options;
    options.run_dir = work_dir();
    options.output = out;
    (void)tbdprof::trace::build_trace(options);
    std::remove(out.c_str());
    std::remove(raw.c_str());
    return 0;
}
