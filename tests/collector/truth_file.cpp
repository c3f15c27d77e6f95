#include "truth_file.h"

#include <tbdprof/test_support/truth_file.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tbdprof::test {

std::map<uint32_t, std::vector<TruthEvent>> read_truth(const std::string& path) {
    std::vector<TruthRecord> records;
    try {
        records = read_truth_records(path);
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        std::exit(2);
    }
    std::map<uint32_t, std::vector<TruthEvent>> by_pid;
    for (TruthRecord& r : records) {
        if (r.type == "kernel" || r.type == "memcpy" || r.type == "memset" || r.type == "alloc" || r.type == "free")
            by_pid[r.pid].push_back(std::move(r));
    }
    return by_pid;
}

}  // namespace tbdprof::test
