// Facts about one kernel read from the trace for the details pane: launch geometry, the library
// call it belongs to, and the allocations its pointer arguments point into.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace {
class Database;
}

namespace tbdprof::viewer {

struct KernelArgument {
    int64_t param = 0, allocation = 0, offset = 0, bytes = 0;
    bool read_only = false;
    std::string category;  // empty: untagged
};

struct LibraryCallInfo {
    std::string name, op;
    int64_t m = 0, n = 0, k = 0, batch = 1;
    double flops = 0;  // of the whole call
    int64_t kernels = 0;
};

struct KernelInfo {
    bool found = false;
    int64_t id = 0;
    std::string name, mangled;
    int64_t start_ns = 0, duration_ns = 0;
    std::optional<int64_t> queued_ns;
    int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, shared_bytes = 0;
    std::optional<int64_t> graph_launch;
    std::optional<LibraryCallInfo> library_call;
    std::vector<KernelArgument> arguments;
};

KernelInfo read_kernel_info(trace::Database& db, int64_t kernel_id);
// Frames innermost first, "symbol (module)"; repeated runs of one frame collapsed to "frame ×N".
std::vector<std::string> read_stack(trace::Database& db, int64_t stack_id);

}  // namespace tbdprof::viewer
