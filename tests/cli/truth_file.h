// Parses the simulated GPU's ground-truth file (TBDSIM_TRUTH; simgpu/driver/truth.cpp) and the
// samples' allocation label files (TBD_SAMPLE_LABELS; docs in shared/notes/definitions.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tbdprof::test {

struct TruthKernel {
    uint32_t pid, correlation;
    uint64_t start, end;
    uint32_t grid[3], block[3], shared;
    std::string name;
    uint32_t graph_id;       // replayed by cuGraphLaunch: the graph's and the node's id; 0 otherwise
    uint64_t graph_node_id;
};
struct TruthCopy {
    uint32_t pid, correlation;
    uint64_t start, end, bytes, src, dst;
    std::string kind;  // HtoD, DtoH, DtoD, HtoH
};
struct TruthSet {
    uint32_t pid, correlation;
    uint64_t start, end, bytes, address;
    uint32_t value;
};
struct TruthMemory {
    bool is_alloc;
    uint32_t pid;
    uint64_t time, bytes, address;
    std::string kind;  // device, device_async, pinned_host, managed
};
// cuProfilerStart/Stop: work the program launched after it has a correlation id above `correlation`.
struct TruthProfiler {
    uint32_t pid;
    bool start;
    uint32_t correlation;
};
struct Truth {
    std::vector<TruthKernel> kernels;
    std::vector<TruthCopy> copies;
    std::vector<TruthSet> sets;
    std::vector<TruthMemory> memory;  // allocs and frees in file order
    std::vector<TruthProfiler> profiler;  // in file order
};

// Throws std::runtime_error on a line it cannot read.
Truth read_truth(const std::string& path);

struct Label {
    bool is_alloc;
    uint64_t address, bytes;
    std::string category;
};
std::vector<Label> read_labels(const std::string& path);

}  // namespace tbdprof::test
