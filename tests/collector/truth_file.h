// The simulated GPU's ground truth (TBDSIM_TRUTH): one tab-separated line per kernel, copy, set,
// allocation and free, from every process that shared the file.
#pragma once

#include <tbdprof/test_support/truth_file.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tbdprof::test {

// A truth line (tests/support/truth_file.h); kernel, memcpy, memset, alloc and free only here.
using TruthEvent = TruthRecord;

// By process id. Exits the program with a message when the file cannot be read.
std::map<uint32_t, std::vector<TruthEvent>> read_truth(const std::string& path);

}  // namespace tbdprof::test
