// Measures `tbdprof import` throughput: MB of JSON per second for reading + decompressing + parsing,
// and for the whole import (including writing SQLite).
//   tbdprof_interop_bench [TRACE.json[.gz] ...]
// Without arguments it generates a synthetic Kineto trace (about 200 MB of JSON, plain and gzip) with
// the event mix of a real training step, so it runs without the validation data.
#include "chrome_stream.h"
#include "input_file.h"
#include "tbdprof/interop/import.h"

#include <zlib.h>

#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <stdexcept>
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
            add(std::snprintf(
                line, sizeof line,
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

void write_file(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
        throw std::runtime_error("cannot write " + path);
}

// Writes the synthetic trace to `path` (gzip when it ends in .gz).
void write_synthetic_trace(const std::string& path, uint64_t target_bytes) {
    if (path.ends_with(".gz")) {
        gzFile g = gzopen(path.c_str(), "wb6");
        if (!g) throw std::runtime_error("cannot write " + path);
        synthetic_trace(target_bytes,
                        [&](const std::string& text) { gzwrite(g, text.data(), static_cast<unsigned>(text.size())); });
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

// The whole JSON text of a plain or gzip file.
std::string read_json(const std::string& path) {
    gzFile g = gzopen(path.c_str(), "rb");
    if (!g) throw std::runtime_error("cannot open " + path);
    std::string text;
    char buffer[1 << 16];
    for (int got; (got = gzread(g, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(got));
    gzclose(g);
    return text;
}

// CPU seconds of this process (one thread works): on a loaded machine wall time says little.
double cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double seconds_of(const std::function<void()>& work) {
    const double start = cpu_seconds();
    work();
    return cpu_seconds() - start;
}

// simdjson's own On-Demand pass over the trace: every event object's every key and value type,
// nothing converted or kept: the floor for a parser built on it.
uint64_t simdjson_pass(const simdjson::padded_string& json) {
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc = parser.iterate(json);
    uint64_t fields = 0;
    auto events = [&](simdjson::ondemand::array array) {
        for (auto element : array) {
            simdjson::ondemand::object object;
            if (element.get_object().get(object)) continue;
            for (auto field : object) {
                std::string_view key = field.unescaped_key();
                simdjson::ondemand::json_type type = field.value().type();
                fields += key.size() + static_cast<uint64_t>(type);
            }
        }
    };
    if (doc.type() == simdjson::ondemand::json_type::array) {
        events(doc.get_array());
    } else {
        for (auto field : doc.get_object()) {
            if (std::string_view(field.unescaped_key()) == "traceEvents") events(field.value().get_array());
        }
    }
    return fields;
}

// CPU seconds of the importer's read + parse (the streaming parser into its events, no SQLite) of
// `path`, best of 3; for a .gz file that includes inflating it.
double import_parse_seconds(const std::string& path) {
    double best_s = 1e30;
    for (int run = 0; run < 3; ++run) {
        best_s = std::min(best_s, seconds_of([&] {
                              tbdprof::interop::JsonInput input(path);
                              tbdprof::interop::ForeignTrace trace;
                              tbdprof::interop::parse_trace_stream(input, trace);
                          }));
    }
    return best_s;
}

// Per file: simdjson's pass vs the importer's read + parse of the same JSON as a plain file (CPU
// time, best of 3); for a gzip file, also the importer's read + inflate + parse of the file itself
// (MB/s of the JSON inside it).
void simdjson_rate(const std::string& path, const std::filesystem::path& temp) {
    const std::string text = read_json(path);
    const simdjson::padded_string json(text);
    const std::string plain = (temp / "plain.json").string();
    write_file(plain, text);
    double floor_s = 1e30;
    for (int run = 0; run < 3; ++run) {
        uint64_t fields = 0;
        floor_s = std::min(floor_s, seconds_of([&] { fields = simdjson_pass(json); }));
        if (fields == 0) throw std::runtime_error(path + ": simdjson found no event fields");
    }
    const double import_s = import_parse_seconds(plain);
    const double mb = static_cast<double>(text.size()) / 1e6;
    std::printf("%-48s %8.1f MB JSON  simdjson pass %7.0f MB/s  import read+parse %7.0f MB/s  ratio %.2fx",
                std::filesystem::path(path).filename().string().substr(0, 48).c_str(), mb, mb / floor_s, mb / import_s,
                import_s / floor_s);
    if (path.ends_with(".gz")) {
        const double gzip_s = import_parse_seconds(path);
        std::printf("  from .gz %7.0f MB/s  ratio %.2fx", mb / gzip_s, gzip_s / floor_s);
    }
    std::printf("\n");
    std::filesystem::remove(plain);
    std::filesystem::remove(temp / "plain.sqlite");
}

}  // namespace

namespace {

constexpr const char* kUsage =
    "usage: tbdprof_interop_bench [KINETO_TRACE.json[.gz]...]\n"
    "       tbdprof_interop_bench --generate FILE[.gz] MEGABYTES\n"
    "       tbdprof_interop_bench --simdjson-rate TRACE.json[.gz]...\n"
    "Import throughput of the Kineto importer: imports each file 3 times (into FILE.bench.sqlite, removed\n"
    "after) and prints MB/s. Without files: a synthetic 200 MB trace, plain and gzipped, in a temporary\n"
    "directory. --generate writes that synthetic trace, of about MEGABYTES of JSON, to FILE (gzip when it\n"
    "ends in .gz), in a few KB of memory, and measures nothing. --simdjson-rate compares simdjson's own\n"
    "On-Demand pass over each file's events with the importer's read + parse of the same plain JSON\n"
    "(and, for a .gz file, with the importer's read + inflate + parse of the file itself).\n";

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
    if (!inputs.empty() && inputs[0] == "--simdjson-rate") {
        const auto temp =
            std::filesystem::temp_directory_path() / ("tbdprof-simdjson-rate-" + std::to_string(::getpid()));
        std::filesystem::create_directories(temp);
        int status = 0;
        try {
            for (size_t i = 1; i < inputs.size(); ++i) simdjson_rate(inputs[i], temp);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tbdprof_interop_bench: %s\n", e.what());
            status = 1;
        }
        std::filesystem::remove_all(temp);
        return status;
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
