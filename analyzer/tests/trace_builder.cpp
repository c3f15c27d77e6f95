#include "trace_builder.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <stdexcept>

#include "tbdprof/trace/schema.h"

namespace tbdtest {

std::string temp_path(const std::string& name) {
    ::mkdir(TBD_TEST_TMP, 0755);
    return std::string(TBD_TEST_TMP) + "/" + name;
}

TraceBuilder::TraceBuilder(const std::string& name) : path_(temp_path(name)) {
    std::remove(path_.c_str());
    db_ = tbdprof::trace::create_database(path_);
    exec(tbdprof::trace::kTraceSchemaSql);
    exec("BEGIN");
    exec("INSERT INTO processes (id, pid, command_line, start_ns, truncated) VALUES (1, 100, 'train', 0, 0)");
    exec("INSERT INTO strings (id, text) VALUES (1, 'kernel_a'), (2, 'kernel_b'), (3, 'kernel_c')");
    exec("INSERT INTO functions (id, name, mangled) VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3)");
    device(0, 1e12);
}

void TraceBuilder::exec(const std::string& sql) { db_.exec(sql.c_str()); }

void TraceBuilder::device(int64_t id, double peak) {
    char sql[512];
    std::snprintf(sql, sizeof sql,
                  "INSERT INTO devices (id, name, cc_major, cc_minor, sm_count, memory_bytes, clock_khz, "
                  "fp32_lanes_per_sm, fp32_peak_flops, simulated) VALUES (%lld, 'Test GPU %lld', 9, 0, 1, 1000000, "
                  "1000, 1, %.17g, 1)",
                  static_cast<long long>(id), static_cast<long long>(id), peak);
    exec(sql);
}

namespace {
std::string opt(std::optional<int64_t> v) { return v ? std::to_string(*v) : "NULL"; }
}  // namespace

int64_t TraceBuilder::kernel(int64_t start, std::optional<int64_t> duration, int64_t function, int64_t device,
                             std::optional<int64_t> library_call, std::optional<int64_t> id) {
    const int64_t kernel_id = id ? *id : next_kernel_;
    next_kernel_ = std::max(next_kernel_, kernel_id + 1);
    exec("INSERT INTO kernels (id, process, device, function, start_ns, duration_ns, library_call) VALUES (" +
         std::to_string(kernel_id) + ", 1, " + std::to_string(device) + ", " + std::to_string(function) + ", " +
         std::to_string(start) + ", " + opt(duration) + ", " + opt(library_call) + ")");
    return kernel_id;
}

int64_t TraceBuilder::library_call(double flops, std::optional<int64_t> compute_type, std::optional<int64_t> a_type,
                                   const std::string& name, int64_t begin_ns) {
    const int64_t id = next_call_++;
    char number[64];
    std::snprintf(number, sizeof number, "%.17g", flops);
    exec("INSERT INTO library_calls (id, process, name, op, begin_ns, end_ns, flops, compute_type, a_type) VALUES (" +
         std::to_string(id) + ", 1, '" + name + "', 'gemm', " + std::to_string(begin_ns) + ", " +
         std::to_string(begin_ns + 1) + ", " + number + ", " + opt(compute_type) + ", " + opt(a_type) + ")");
    return id;
}

int64_t TraceBuilder::allocation(int64_t bytes, int64_t alloc_ns, std::optional<int64_t> free_ns,
                                 const std::string& category, const std::string& kind, int64_t device,
                                 std::optional<int64_t> stack) {
    const int64_t id = next_allocation_++;
    exec("INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind, stack) VALUES (" +
         std::to_string(id) + ", 1, " + std::to_string(device) + ", " + std::to_string(4096 * id) + ", " +
         std::to_string(bytes) + ", " + std::to_string(alloc_ns) + ", " + opt(free_ns) + ", '" + kind + "', " +
         opt(stack) + ")");
    if (!category.empty()) {
        exec("INSERT INTO allocation_categories (allocation, category) VALUES (" + std::to_string(id) + ", '" +
             category + "')");
    }
    return id;
}

void TraceBuilder::range(int64_t begin, int64_t end, const std::string& name, int64_t process) {
    exec("INSERT INTO ranges (process, begin_ns, end_ns, name) VALUES (" + std::to_string(process) + ", " +
         std::to_string(begin) + ", " + std::to_string(end) + ", '" + name + "')");
}

void TraceBuilder::iteration(int64_t begin, int64_t end, int64_t process) {
    exec("INSERT INTO iterations (process, idx, begin_ns, end_ns, source) VALUES (" + std::to_string(process) +
         ", (SELECT count(*) FROM iterations), " + std::to_string(begin) + ", " + std::to_string(end) + ", 'nvtx')");
}

void TraceBuilder::copy(int64_t start, int64_t duration, int64_t device) {
    exec("INSERT INTO copies (process, device, kind, bytes, start_ns, duration_ns) VALUES (1, " +
         std::to_string(device) + ", 'htod', 64, " + std::to_string(start) + ", " + std::to_string(duration) + ")");
}

void TraceBuilder::set(int64_t start, int64_t duration, int64_t device) {
    exec("INSERT INTO sets (process, device, value, bytes, start_ns, duration_ns) VALUES (1, " + std::to_string(device) +
         ", 0, 64, " + std::to_string(start) + ", " + std::to_string(duration) + ")");
}

void TraceBuilder::cpu_sample(int64_t ts, int64_t user_ns, int64_t system_ns, int64_t process) {
    exec("INSERT INTO cpu_samples (process, ts_ns, user_ns, system_ns) VALUES (" + std::to_string(process) + ", " +
         std::to_string(ts) + ", " + std::to_string(user_ns) + ", " + std::to_string(system_ns) + ")");
}

std::string TraceBuilder::finish(int64_t duration_ns) {
    exec("INSERT INTO run (id, command_line, start_unix_ns, start_monotonic_ns, duration_ns, tool_version, "
         "simulated_device, clock_source, host_timed_kernels, truncated_files) VALUES (1, 'train', 0, 0, " +
         std::to_string(duration_ns) + ", 'test', 1, 'cupti', 0, 0)");
    exec("COMMIT");
    db_.close();
    return path_;
}

RunResult run_analyze(const std::string& args) {
    RunResult result;
    const std::string command = std::string(TBD_ANALYZE_EXE) + " " + args + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) throw std::runtime_error("popen failed");
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
    const int status = ::pclose(pipe);
    result.signaled = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 128);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace tbdtest
