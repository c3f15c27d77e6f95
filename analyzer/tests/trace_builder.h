// Builds small traces by hand for tests, with the real schema (schemas/trace.sql as embedded in the
// trace library), so every expected number can be worked out on paper.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tbdprof/trace/sqlite_handle.h"

namespace tbdtest {

// A fresh path under the test build folder.
std::string temp_path(const std::string& name);

class TraceBuilder {
public:
    // Creates the file with the schema, one device (id 0, fp32 peak 1e12 FLOP/s) and one process.
    explicit TraceBuilder(const std::string& name);
    TraceBuilder(const TraceBuilder&) = delete;
    TraceBuilder& operator=(const TraceBuilder&) = delete;

    void exec(const std::string& sql);
    void device(int64_t id, double fp32_peak_flops);
    int64_t kernel(int64_t start, std::optional<int64_t> duration, int64_t function = 1, int64_t device = 0,
                   std::optional<int64_t> library_call = std::nullopt, std::optional<int64_t> id = std::nullopt);
    int64_t library_call(double flops, std::optional<int64_t> compute_type, std::optional<int64_t> a_type,
                         const std::string& name = "cublasGemmEx", int64_t begin_ns = 0);
    int64_t allocation(int64_t bytes, int64_t alloc_ns, std::optional<int64_t> free_ns,
                       const std::string& category = "", const std::string& kind = "device", int64_t device = 0,
                       std::optional<int64_t> stack = std::nullopt);
    void range(int64_t begin, int64_t end, const std::string& name, int64_t process = 1);
    void iteration(int64_t begin, int64_t end, int64_t process = 1);
    void copy(int64_t start, int64_t duration, int64_t device = 0);
    void set(int64_t start, int64_t duration, int64_t device = 0);
    void cpu_sample(int64_t ts, int64_t user_ns, int64_t system_ns, int64_t process = 1);
    // Writes the run row and closes the file; returns its path.
    std::string finish(int64_t duration_ns);
    const std::string& path() const { return path_; }

private:
    tbdprof::trace::Database db_;
    std::string path_;
    int64_t next_kernel_ = 1;
    int64_t next_call_ = 1;
    int64_t next_allocation_ = 1;
    int64_t next_function_string_ = 1000;
};

// Runs `tbdprof-analyze ARGS` in a shell; returns the exit status (-1 when killed by a signal) and
// what it printed on stdout and stderr together.
struct RunResult {
    int status = 0;
    bool signaled = false;
    std::string output;
};
RunResult run_analyze(const std::string& args);

}  // namespace tbdtest
