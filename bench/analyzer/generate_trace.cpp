// Writes a synthetic tbdprof trace of a training run with the real schema (schemas/trace.sql, as
// embedded at build time), for the analyzer benchmark and the corrupted-input tests.
//   tbdprof_trace_generator OUT.sqlite [--kernels N] [--kernels-per-iteration K] [--seed S]
// Shape: one device, K kernels per iteration (every 4th a cuBLAS SGEMM with FLOPs), one input copy
// and a few activation allocations per iteration, persistent weights, NVTX "ProfilerStep#i" ranges,
// CPU samples every 10 ms.
#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>

#include "tbdprof/analyzer/schema_info.h"

namespace {

[[noreturn]] void die(sqlite3* db, const char* what) {
    std::fprintf(stderr, "tbdprof_trace_generator: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    std::exit(1);
}

void exec(sqlite3* db, const char* sql) {
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) die(db, sql);
}

sqlite3_stmt* prepare(sqlite3* db, const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) die(db, sql);
    return stmt;
}

void run(sqlite3* db, sqlite3_stmt* stmt) {
    if (sqlite3_step(stmt) != SQLITE_DONE) die(db, sqlite3_sql(stmt));
    sqlite3_reset(stmt);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: tbdprof_trace_generator OUT.sqlite [--kernels N] [--kernels-per-iteration K] [--seed S]\n");
        return 2;
    }
    const std::string out = argv[1];
    int64_t kernels = 10'000'000, per_iteration = 1000;
    unsigned seed = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--kernels")) kernels = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--kernels-per-iteration")) per_iteration = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--seed")) seed = static_cast<unsigned>(std::atoi(argv[i + 1]));
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (kernels <= 0 || per_iteration <= 0) return 2;
    ::unlink(out.c_str());
    sqlite3* db = nullptr;
    if (sqlite3_open(out.c_str(), &db) != SQLITE_OK) die(db, "open");
    exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -200000");
    exec(db, tbdprof::analyzer::kTraceSchemaSql);
    exec(db, "BEGIN");

    // Named columns everywhere: the schema may gain columns without breaking the generator.
    exec(db, "INSERT INTO devices (id, name, cc_major, cc_minor, sm_count, memory_bytes, clock_khz, fp32_lanes_per_sm, "
             "fp32_peak_flops, simulated) VALUES (0, 'Simulated H200', 9, 0, 132, 150323855360, 1980000, 128, "
             "2.0 * 132 * 128 * 1980000000.0, 1)");
    exec(db, "INSERT INTO processes (id, pid, parent_pid, command_line, executable, start_ns, truncated) "
             "VALUES (1, 4242, 1, 'python train.py', '/usr/bin/python3', 0, 0)");
    exec(db, "INSERT INTO threads (id, process, tid, name, first_seen_ns) VALUES (1, 1, 4242, 'python', 0)");
    exec(db, "INSERT INTO streams (id, process, device, handle) VALUES (1, 1, 0, 0)");
    constexpr int kFunctions = 40;
    sqlite3_stmt* string_insert = prepare(db, "INSERT INTO strings (id, text) VALUES (?1, ?2)");
    sqlite3_stmt* function_insert = prepare(db, "INSERT INTO functions (id, name, mangled) VALUES (?1, ?2, ?2)");
    for (int f = 1; f <= kFunctions; ++f) {
        const std::string name = f % 4 == 0 ? "sm90_xmma_gemm_f32f32_" + std::to_string(f) : "elementwise_kernel_" + std::to_string(f);
        sqlite3_bind_int(string_insert, 1, f);
        sqlite3_bind_text(string_insert, 2, name.c_str(), -1, SQLITE_TRANSIENT);
        run(db, string_insert);
        sqlite3_bind_int(function_insert, 1, f);
        sqlite3_bind_int(function_insert, 2, f);
        run(db, function_insert);
    }

    std::mt19937_64 random(seed);
    sqlite3_stmt* kernel = prepare(db, "INSERT INTO kernels (id, process, thread, device, stream, function, start_ns, duration_ns, queued_ns, "
                                       "grid, block, shared_bytes, correlation, library_call) "
                                       "VALUES (?1, 1, 1, 0, 1, ?2, ?3, ?4, 2000, 65537, 256, 0, ?1, ?5)");
    sqlite3_stmt* call = prepare(db, "INSERT INTO library_calls (id, process, thread, name, op, begin_ns, end_ns, stream, m, n, k, "
                                     "batch, a_type, b_type, c_type, compute_type, transa, transb, flops) VALUES "
                                     "(?1, 1, 1, 'cublasSgemm_v2', 'gemm', ?2, ?3, 0, ?4, ?4, ?4, 1, 0, 0, 0, 68, 0, 0, ?5)");
    sqlite3_stmt* range = prepare(db, "INSERT INTO ranges (process, thread, begin_ns, end_ns, name) VALUES (1, 1, ?1, ?2, ?3)");
    sqlite3_stmt* copy = prepare(db, "INSERT INTO copies (process, thread, device, stream, kind, bytes, start_ns, duration_ns, async, api) "
                                     "VALUES (1, 1, 0, 1, 'htod', ?1, ?2, ?3, 1, 'runtime')");
    sqlite3_stmt* alloc = prepare(db, "INSERT INTO allocations (id, process, thread, device, address, bytes, alloc_ns, free_ns, kind, api) "
                                      "VALUES (?1, 1, 1, 0, ?2, ?3, ?4, ?5, 'device', 'runtime')");
    sqlite3_stmt* category = prepare(db, "INSERT INTO allocation_categories (allocation, category, reason) VALUES (?1, ?2, 'generator')");
    sqlite3_stmt* cpu = prepare(db, "INSERT INTO cpu_samples (process, ts_ns, user_ns, system_ns) VALUES (1, ?1, ?2, ?3)");

    int64_t allocation_id = 0;
    auto add_allocation = [&](int64_t bytes, int64_t at, int64_t freed, const char* cat) {
        ++allocation_id;
        sqlite3_bind_int64(alloc, 1, allocation_id);
        sqlite3_bind_int64(alloc, 2, 0x7f0000000000 + allocation_id * 0x100000);
        sqlite3_bind_int64(alloc, 3, bytes);
        sqlite3_bind_int64(alloc, 4, at);
        if (freed >= 0) sqlite3_bind_int64(alloc, 5, freed);
        else sqlite3_bind_null(alloc, 5);
        run(db, alloc);
        sqlite3_bind_int64(category, 1, allocation_id);
        sqlite3_bind_text(category, 2, cat, -1, SQLITE_STATIC);
        run(db, category);
    };
    for (int w = 0; w < 8; ++w) add_allocation(64ll << 20, 1000 + w, -1, w % 2 ? "optimizer_state" : "weights");

    // An iteration's range and its transient allocations are written once its end is known.
    auto close_iteration = [&](int64_t begin, int64_t end, int64_t index) {
        sqlite3_bind_int64(range, 1, begin);
        sqlite3_bind_int64(range, 2, end);
        const std::string name = "ProfilerStep#" + std::to_string(index);
        sqlite3_bind_text(range, 3, name.c_str(), -1, SQLITE_TRANSIENT);
        run(db, range);
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
            sqlite3_bind_int64(copy, 1, 4 << 20);
            sqlite3_bind_int64(copy, 2, t);
            sqlite3_bind_int64(copy, 3, 30'000);
            run(db, copy);
            t += 35'000;
        }
        const int64_t duration = 2'000 + static_cast<int64_t>(random() % 12'000);
        const int function = 1 + static_cast<int>(random() % kFunctions);
        sqlite3_bind_int64(kernel, 1, id);
        sqlite3_bind_int(kernel, 2, function);
        sqlite3_bind_int64(kernel, 3, t);
        sqlite3_bind_int64(kernel, 4, duration);
        if (function % 4 == 0) {
            ++call_id;
            const int64_t n = 256 + 64 * static_cast<int64_t>(random() % 8);
            sqlite3_bind_int64(call, 1, call_id);
            sqlite3_bind_int64(call, 2, t - 5'000);
            sqlite3_bind_int64(call, 3, t - 1'000);
            sqlite3_bind_int64(call, 4, n);
            sqlite3_bind_double(call, 5, 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
            run(db, call);
            sqlite3_bind_int64(kernel, 5, call_id);
        } else {
            sqlite3_bind_null(kernel, 5);
        }
        run(db, kernel);
        t += duration + static_cast<int64_t>(random() % 2'000);
        while (cpu_next <= t) {
            sqlite3_bind_int64(cpu, 1, cpu_next);
            sqlite3_bind_int64(cpu, 2, cpu_total * 9 / 10);
            sqlite3_bind_int64(cpu, 3, cpu_total / 10);
            run(db, cpu);
            cpu_total += 8'000'000;  // 0.8 cores
            cpu_next += 10'000'000;
        }
    }
    close_iteration(iteration_start, t, (kernels - 1) / per_iteration);
    sqlite3_stmt* run_row = prepare(db, "INSERT INTO run (id, command_line, host, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, "
                                        "simulated_device, clock_source, host_timed_kernels, truncated_files) "
                                        "VALUES (1, 'python train.py', 'bench', 0, 0, ?1, 'bench', 1, 'cupti', 0, 0)");
    sqlite3_bind_int64(run_row, 1, t + 1'000'000);
    run(db, run_row);
    for (sqlite3_stmt* s : {string_insert, function_insert, kernel, call, range, copy, alloc, category, cpu, run_row}) sqlite3_finalize(s);
    exec(db, "COMMIT");
    sqlite3_close(db);
    std::printf("wrote %s: %lld kernels, %lld library calls, %lld allocations\n", out.c_str(), static_cast<long long>(kernels),
                static_cast<long long>(call_id), static_cast<long long>(allocation_id));
    return 0;
}
