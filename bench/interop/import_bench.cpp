// Measures `tbdprof import` throughput: MB of JSON per second for reading + decompressing + parsing,
// and for the whole import (including writing SQLite).
//   tbdprof_interop_bench [TRACE.json[.gz] ...]
// Without arguments it generates a synthetic Kineto trace (about 200 MB of JSON, plain and gzip) with
// the event mix of a real training step, so it runs without the validation data.
#include "tbdprof/interop/import.h"

#include <zlib.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// One training step's worth of events, repeated until about target_bytes of JSON: operators,
// launches, kernels, flows, memory. Written a step at a time through `write`, so a trace of any
// size is generated in a few KB.
template <typename Write>
void synthetic_trace(uint64_t target_bytes, Write&& write) {
    std::string out = R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB", )"
                      R"("totalGlobalMem": 34089730048, "computeMajor": 7, "computeMinor": 0, "numSms": 80}], "traceEvents": [)";
    uint64_t written = 0;
    long long ts = 1700000000000000;
    long long correlation = 1;
    char line[1024];
    bool first = true;
    auto add = [&](int n) {
        if (!first) out += ",\n";
        first = false;
        out.append(line, static_cast<size_t>(n));
    };
    while (written + out.size() < target_bytes) {
        // A training step every 1000 operators, as torch.profiler marks them (the analyzer and the
        // tagger take iterations from these ranges).
        if (correlation % 1000 == 1) {
            add(std::snprintf(line, sizeof line,
                              R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%lld", "pid": 4242, "tid": 4242, )"
                              R"("ts": %lld, "dur": %lld})",
                              correlation / 1000, ts - 1, 1000LL * 150 - 2));
        }
        add(std::snprintf(line, sizeof line,
                          R"({"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 4242, "tid": 4242, "ts": %lld.125, "dur": 40.5, )"
                          R"("args": {"External id": %lld, "Sequence number": 17, "Fwd thread id": 0, "Ev Idx": %lld}})",
                          ts, correlation, correlation));
        add(std::snprintf(line, sizeof line,
                          R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": %lld.250, )"
                          R"("dur": 6.75, "args": {"External id": %lld, "cbid": 211, "correlation": %lld}})",
                          ts + 5, correlation, correlation));
        add(std::snprintf(line, sizeof line,
                          R"j({"ph": "X", "cat": "kernel", "name": "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)", )j"
                          R"("pid": 0, "tid": 7, "ts": %lld.500, "dur": 120.125, "args": {"External id": %lld, "queued": 0, "device": 0, )"
                          R"("context": 1, "stream": 7, "correlation": %lld, "registers per thread": 232, "shared memory": 49152, )"
                          R"("blocks per SM": 1.6, "warps per SM": 6.4, "grid": [32, 4, 1], "block": [128, 1, 1], )"
                          R"("est. achieved occupancy %%": 10}})",
                          ts + 20, correlation, correlation));
        add(std::snprintf(line, sizeof line, R"({"ph": "s", "id": %lld, "pid": 4242, "tid": 4242, "ts": %lld.250, "cat": "ac2g", "name": "ac2g"})",
                          correlation, ts + 5));
        add(std::snprintf(line, sizeof line,
                          R"({"ph": "f", "id": %lld, "pid": 0, "tid": 7, "ts": %lld.500, "cat": "ac2g", "name": "ac2g", "bp": "e"})",
                          correlation, ts + 20));
        add(std::snprintf(line, sizeof line,
                          R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 4242, "tid": 4242, "ts": %lld, )"
                          R"("args": {"Device Type": 1, "Device Id": 0, "Addr": %lld, "Bytes": %d, "Total Allocated": 1000000, "Total Reserved": 2000000}})",
                          ts + 2, 140000000000000LL + (correlation % 64) * 4096, (correlation / 64) % 2 == 0 ? 4096 : -4096));
        ts += 150;
        ++correlation;
        if (out.size() > (1u << 16)) {
            write(out);
            written += out.size();
            out.clear();
        }
    }
    out += "]}\n";
    write(out);
}

// Writes the synthetic trace to `path` (gzip when it ends in .gz).
void write_synthetic_trace(const std::string& path, uint64_t target_bytes) {
    if (path.ends_with(".gz")) {
        gzFile g = gzopen(path.c_str(), "wb6");
        if (!g) throw std::runtime_error("cannot write " + path);
        synthetic_trace(target_bytes, [&](const std::string& text) {
            gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
        });
        if (gzclose(g) != Z_OK) throw std::runtime_error("cannot write " + path);
        return;
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    synthetic_trace(target_bytes, [&](const std::string& text) { std::fwrite(text.data(), 1, text.size(), f); });
    if (std::fclose(f) != 0) throw std::runtime_error("cannot write " + path);
}

void measure(const std::string& path) {
    const std::string out = path + ".bench.sqlite";
    double best_parse = 1e30, best_total = 1e30;
    tbdprof::interop::ImportSummary summary;
    tbdprof::interop::ImportOptions options;
    options.force = true;  // each run replaces the previous run's output
    for (int run = 0; run < 3; ++run) {
        summary = tbdprof::interop::import_trace_file(path, out, options);
        best_parse = std::min(best_parse, summary.parse_seconds);
        best_total = std::min(best_total, summary.total_seconds);
    }
    std::filesystem::remove(out);
    const double mb = static_cast<double>(summary.json_bytes) / 1e6;
    std::printf("%-60s %8.1f MB JSON %9llu events  read+parse %6.3f s = %6.0f MB/s   whole import %6.3f s = %6.0f MB/s\n",
                std::filesystem::path(path).filename().string().c_str(), mb, static_cast<unsigned long long>(summary.events),
                best_parse, mb / best_parse, best_total, mb / best_total);
}

}  // namespace

namespace {

constexpr const char* kUsage =
    "usage: tbdprof_interop_bench [KINETO_TRACE.json[.gz]...]\n"
    "       tbdprof_interop_bench --generate FILE[.gz] MEGABYTES\n"
    "Import throughput of the Kineto importer: imports each file 3 times (into FILE.bench.sqlite, removed\n"
    "after) and prints MB/s. Without files: a synthetic 200 MB trace, plain and gzipped, in a temporary\n"
    "directory. --generate writes that synthetic trace, of about MEGABYTES of JSON, to FILE (gzip when it\n"
    "ends in .gz), in a few KB of memory, and measures nothing.\n";

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> inputs(argv + 1, argv + argc);
    for (const std::string& input : inputs) {
        if (input == "--help" || input == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
    }
    if (!inputs.empty() && inputs[0] == "--generate") {
        char* end = nullptr;
        const unsigned long long megabytes = inputs.size() == 3 ? std::strtoull(inputs[2].c_str(), &end, 10) : 0;
        if (megabytes == 0 || *end != '\0') {
            std::fprintf(stderr, "tbdprof_interop_bench: --generate takes FILE and a number of megabytes\n%s", kUsage);
            return 2;
        }
        try {
            write_synthetic_trace(inputs[1], megabytes * 1000000ull);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tbdprof_interop_bench: %s\n", e.what());
            std::filesystem::remove(inputs[1]);
            return 1;
        }
        return 0;
    }
    for (const std::string& input : inputs) {
        if (!input.empty() && input[0] == '-') {
            std::fprintf(stderr, "tbdprof_interop_bench: unknown option %s\n%s", input.c_str(), kUsage);
            return 2;
        }
    }
    std::filesystem::path temp;
    if (inputs.empty()) {
        temp = std::filesystem::temp_directory_path() / ("tbdprof-interop-bench-" + std::to_string(::getpid()));
        std::filesystem::create_directories(temp);
        const std::string plain = (temp / "synthetic.pt.trace.json").string();
        const std::string gz = plain + ".gz";
        write_synthetic_trace(plain, 200u << 20);
        write_synthetic_trace(gz, 200u << 20);
        inputs = {plain, gz};
    }
    try {
        for (const std::string& path : inputs) measure(path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench: %s\n", e.what());
        return 1;
    }
    if (!temp.empty()) std::filesystem::remove_all(temp);
    return 0;
}
