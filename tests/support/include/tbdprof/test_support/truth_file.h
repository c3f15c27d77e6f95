// The one reader of the simulated GPU's ground-truth file (TBDSIM_TRUTH, written by
// simgpu/driver/truth.cpp): one tab-separated line per kernel, copy, set, allocation, free and
// cuProfilerStart/Stop, from every process that shared the file. The tests' views of it (by kind,
// by process) are built from these records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbdprof::test {

struct TruthRecord {
    std::string type;  // kernel, memcpy, memset, alloc, free, profiler
    uint32_t pid = 0;
    uint64_t correlation = 0;
    uint64_t stream = 0;
    uint64_t start = 0, end = 0;  // alloc/free: both the time
    double flops = 0;             // kernel
    uint32_t grid[3] = {}, block[3] = {};
    uint32_t shared_mem = 0;
    uint32_t precision = 0;  // TBDSIM_PRECISION_*: 1 FP32, 2 TF32, 3 FP16, 4 BF16, 5 FP64, 0 none
    std::string name;        // kernel
    uint32_t graph_id = 0;   // kernel replayed by cuGraphLaunch: the graph's and the node's id
    uint64_t graph_node_id = 0;
    std::string kind;  // memcpy: HtoD, DtoH, DtoD, HtoH; alloc/free: device, device_async, pinned_host, managed
    uint64_t bytes = 0;
    uint64_t address = 0;         // memcpy: destination; memset/alloc/free: the address
    uint64_t src = 0;             // memcpy
    uint32_t value = 0;           // memset
    bool profiler_start = false;  // profiler: start (true) or stop; `correlation` is the last id before it
};

// In file order. Throws std::runtime_error when the file cannot be read or a line of a known kind
// is malformed; lines of other kinds are returned with only `type` and `pid` set.
std::vector<TruthRecord> read_truth_records(const std::string& path);

}  // namespace tbdprof::test
