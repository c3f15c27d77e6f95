// The simulated GPU's ground truth (TBDSIM_TRUTH): one tab-separated line per kernel, copy, set,
// allocation and free, from every process that shared the file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tbdprof::test {

struct TruthEvent {
    std::string type;  // kernel, memcpy, memset, alloc, free
    uint32_t pid = 0;
    uint64_t correlation = 0;
    uint64_t stream = 0;
    uint64_t start = 0, end = 0;
    double flops = 0;
    uint32_t grid[3] = {}, block[3] = {};
    uint32_t shared_mem = 0;
    uint32_t precision = 0;
    std::string name;       // kernel
    std::string kind;       // memcpy: HtoD...; alloc/free: device, device_async, pinned_host, managed
    uint64_t bytes = 0;
    uint64_t address = 0;   // memcpy: destination; memset/alloc/free: the address
    uint64_t src = 0;
    uint32_t value = 0;
};

// By process id. Exits the program with a message when the file cannot be read.
std::map<uint32_t, std::vector<TruthEvent>> read_truth(const std::string& path);

}  // namespace tbdprof::test
