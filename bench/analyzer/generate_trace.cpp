// Writes a synthetic tbdprof trace of a training run with the real schema (schemas/trace.sql, as
// the trace library embeds it), for the analyzer benchmark and the corrupted-input tests.
//   tbdprof_trace_generator OUT.sqlite [--kernels N] [--kernels-per-iteration K] [--seed S]
//                           [--communication-every C]
// Shape: one device, K kernels per iteration (every 4th a cuBLAS SGEMM with FLOPs), one input copy
// and a few activation allocations per iteration, persistent weights, NVTX "ProfilerStep#i" ranges,
// CPU samples every 10 ms. With --communication-every C, every C-th kernel is an NCCL all-reduce on a
// second stream that runs alongside the kernels after it (communication overlapped by computation).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>

#include "tbdprof/trace/schema.h"
#include "tbdprof/trace/sqlite_handle.h"

using tbdprof::trace::Statement;

namespace {

int generate(const std::string& out, int64_t kernels, int64_t per_iteration, unsigned seed, int64_t communication_every);

constexpr const char* kUsage =
    "usage: tbdprof_trace_generator OUT.sqlite [--kernels N] [--kernels-per-iteration K] [--seed S]\n"
    "                               [--communication-every C]\n"
    "Writes a synthetic trace of a training run (the real schema) to OUT.sqlite, replacing it.\n"
    "  --kernels N                 kernels in all (default 10000000)\n"
    "  --kernels-per-iteration K   kernels per training step (default 1000)\n"
    "  --seed S                    random seed (default 1)\n"
    "  --communication-every C     every C-th kernel an NCCL all-reduce on a second stream (default 0: none)\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "tbdprof_trace_generator: %s\n%s", message.c_str(), kUsage);
    return 2;
}

// A whole decimal number of at least `min`; false otherwise.
bool parse_number(const char* text, int64_t min, int64_t& value) {
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || parsed < min) return false;
    value = parsed;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::fputs(kUsage, stdout);
            return 0;
        }
    }
    if (argc < 2) return usage_error("no output file given");
    if (argv[1][0] == '-') return usage_error(std::string("the first argument must be the output file, not ") + argv[1]);
    const std::string out = argv[1];
    int64_t kernels = 10'000'000, per_iteration = 1000, seed = 1, communication_every = 0;
    for (int i = 2; i < argc; i += 2) {
        int64_t* target = nullptr;
        if (!std::strcmp(argv[i], "--kernels")) target = &kernels;
        else if (!std::strcmp(argv[i], "--kernels-per-iteration")) target = &per_iteration;
        else if (!std::strcmp(argv[i], "--seed")) target = &seed;
        else if (!std::strcmp(argv[i], "--communication-every")) target = &communication_every;
        else return usage_error(std::string("unknown option ") + argv[i]);
        if (i + 1 >= argc) return usage_error(std::string(argv[i]) + " needs a value");
        const int64_t min = (target == &seed || target == &communication_every) ? 0 : 1;
        if (!parse_number(argv[i + 1], min, *target))
            return usage_error(std::string("bad value '") + argv[i + 1] + "' for " + argv[i] + " (want a whole number, at least " +
                               std::to_string(min) + ")");
    }
    if (kernels <= 0 || per_iteration <= 0) return 2;
    try {
        return generate(out, kernels, per_iteration, static_cast<unsigned>(seed), communication_every);
    } catch (const tbdprof::trace::SqliteError& e) {
        std::fprintf(stderr, "tbdprof_trace_generator: %s\n", e.what());
        return 1;
    }
}

namespace {

int generate(const std::string& out, int64_t kernels, int64_t per_iteration, unsigned seed, int64_t communication_every) {
    ::unlink(out.c_str());
    tbdprof::trace::Database db = tbdprof::trace::create_database(out);
    db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -200000");
    db.exec(tbdprof::trace::kTraceSchemaSql);
    db.exec("BEGIN");

    // Named columns everywhere: the schema may gain columns without breaking the generator.
    db.exec("INSERT INTO devices (id, name, cc_major, cc_minor, sm_count, memory_bytes, clock_khz, fp32_lanes_per_sm, "
             "fp32_peak_flops, simulated) VALUES (0, 'Simulated H200', 9, 0, 132, 150323855360, 1980000, 128, "
             "2.0 * 132 * 128 * 1980000000.0, 1)");
    db.exec("INSERT INTO processes (id, pid, parent_pid, command_line, executable, start_ns, truncated) "
             "VALUES (1, 4242, 1, 'python train.py', '/usr/bin/python3', 0, 0)");
    db.exec("INSERT INTO threads (id, process, tid, name, first_seen_ns) VALUES (1, 1, 4242, 'python', 0)");
    db.exec("INSERT INTO streams (id, process, device, handle) VALUES (1, 1, 0, 0)");
    db.exec("INSERT INTO streams (id, process, device, handle) VALUES (2, 1, 0, 77)");
    constexpr int kFunctions = 40;
    Statement string_insert(db, "INSERT INTO strings (id, text) VALUES (?1, ?2)");
    Statement function_insert(db, "INSERT INTO functions (id, name, mangled) VALUES (?1, ?2, ?2)");
    for (int f = 1; f <= kFunctions; ++f) {
        const std::string name = f % 4 == 0 ? "sm90_xmma_gemm_f32f32_" + std::to_string(f) : "elementwise_kernel_" + std::to_string(f);
        string_insert.bind(1, f);
        string_insert.bind(2, name);
        string_insert.run();
        function_insert.bind(1, f);
        function_insert.bind(2, f);
        function_insert.run();
    }
    constexpr int kNcclFunction = kFunctions + 1;
    string_insert.bind(1, kNcclFunction);
    string_insert.bind(2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    string_insert.run();
    function_insert.bind(1, kNcclFunction);
    function_insert.bind(2, kNcclFunction);
    function_insert.run();

    std::mt19937_64 random(seed);
    Statement kernel(db, "INSERT INTO kernels (id, process, thread, device, stream, function, start_ns, duration_ns, queued_ns, "
                                       "grid, block, shared_bytes, correlation, library_call) "
                                       "VALUES (?1, 1, 1, 0, ?6, ?2, ?3, ?4, 2000, 65537, 256, 0, ?1, ?5)");
    Statement call(db, "INSERT INTO library_calls (id, process, thread, name, op, begin_ns, end_ns, stream, m, n, k, "
                                     "batch, a_type, b_type, c_type, compute_type, transa, transb, flops) VALUES "
                                     "(?1, 1, 1, 'cublasSgemm_v2', 'gemm', ?2, ?3, 0, ?4, ?4, ?4, 1, 0, 0, 0, 68, 0, 0, ?5)");
    Statement range(db, "INSERT INTO ranges (process, thread, begin_ns, end_ns, name) VALUES (1, 1, ?1, ?2, ?3)");
    Statement copy(db, "INSERT INTO copies (process, thread, device, stream, kind, bytes, start_ns, duration_ns, async, api) "
                                     "VALUES (1, 1, 0, 1, 'htod', ?1, ?2, ?3, 1, 'runtime')");
    Statement alloc(db, "INSERT INTO allocations (id, process, thread, device, address, bytes, alloc_ns, free_ns, kind, api) "
                                      "VALUES (?1, 1, 1, 0, ?2, ?3, ?4, ?5, 'device', 'runtime')");
    Statement category(db, "INSERT INTO allocation_categories (allocation, category, reason) VALUES (?1, ?2, 'generator')");
    Statement cpu(db, "INSERT INTO cpu_samples (process, ts_ns, user_ns, system_ns) VALUES (1, ?1, ?2, ?3)");

    int64_t allocation_id = 0;
    auto add_allocation = [&](int64_t bytes, int64_t at, int64_t freed, const char* cat) {
        ++allocation_id;
        alloc.bind(1, allocation_id);
        alloc.bind(2, 0x7f0000000000 + allocation_id * 0x100000);
        alloc.bind(3, bytes);
        alloc.bind(4, at);
        if (freed >= 0) alloc.bind(5, freed);
        else alloc.bind_null(5);
        alloc.run();
        category.bind(1, allocation_id);
        category.bind(2, cat);
        category.run();
    };
    for (int w = 0; w < 8; ++w) add_allocation(64ll << 20, 1000 + w, -1, w % 2 ? "optimizer_state" : "weights");

    // An iteration's range and its transient allocations are written once its end is known.
    auto close_iteration = [&](int64_t begin, int64_t end, int64_t index) {
        range.bind(1, begin);
        range.bind(2, end);
        const std::string name = "ProfilerStep#" + std::to_string(index);
        range.bind(3, name);
        range.run();
        add_allocation(4 << 20, begin, end - 1000, "input");
        for (int a = 0; a < 4; ++a) add_allocation((16ll << 20) * (a + 1), begin + 1000 * a, end - 2000, "activations");
        add_allocation(32 << 20, end - (end - begin) / 3, end - 1500, "gradients");
    };
    int64_t t = 1'000'000, call_id = 0, cpu_next = 0, cpu_total = 0, iteration_start = -1;
    for (int64_t id = 1; id <= kernels; ++id) {
        const int64_t in_iteration = (id - 1) % per_iteration;
        if (in_iteration == 0) {
            if (iteration_start >= 0) close_iteration(iteration_start, t, (id - 1) / per_iteration - 1);
            iteration_start = t;
            copy.bind(1, 4 << 20);
            copy.bind(2, t);
            copy.bind(3, 30'000);
            copy.run();
            t += 35'000;
        }
        const bool communication = communication_every > 0 && id % communication_every == 0;
        const int64_t duration = 2'000 + static_cast<int64_t>(random() % 12'000);
        const int function = communication ? kNcclFunction : 1 + static_cast<int>(random() % kFunctions);
        kernel.bind(6, communication ? 2 : 1);
        kernel.bind(1, id);
        kernel.bind(2, function);
        kernel.bind(3, t);
        kernel.bind(4, duration);
        if (function % 4 == 0) {
            ++call_id;
            const int64_t n = 256 + 64 * static_cast<int64_t>(random() % 8);
            call.bind(1, call_id);
            call.bind(2, t - 5'000);
            call.bind(3, t - 1'000);
            call.bind(4, n);
            call.bind(5, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
            call.run();
            kernel.bind(5, call_id);
        } else {
            kernel.bind_null(5);
        }
        kernel.run();
        if (communication) continue;  // on its own stream: the next kernels run alongside it
        t += duration + static_cast<int64_t>(random() % 2'000);
        while (cpu_next <= t) {
            cpu.bind(1, cpu_next);
            cpu.bind(2, cpu_total * 9 / 10);
            cpu.bind(3, cpu_total / 10);
            cpu.run();
            cpu_total += 8'000'000;  // 0.8 cores
            cpu_next += 10'000'000;
        }
    }
    close_iteration(iteration_start, t, (kernels - 1) / per_iteration);
    Statement run_row(db, "INSERT INTO run (id, command_line, host, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, "
                                        "simulated_device, clock_source, host_timed_kernels, truncated_files) "
                                        "VALUES (1, 'python train.py', 'bench', 0, 0, ?1, 'bench', 1, 'cupti', 0, 0)");
    run_row.bind(1, t + 1'000'000);
    run_row.run();
    db.exec("COMMIT");
    std::printf("wrote %s: %lld kernels, %lld library calls, %lld allocations\n", out.c_str(), static_cast<long long>(kernels),
                static_cast<long long>(call_id), static_cast<long long>(allocation_id));
    return 0;
}

}  // namespace
