#include "truth_file.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tbdprof::test {
namespace {

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, '\t')) fields.push_back(field);
    return fields;
}

uint64_t number(const std::string& text) { return std::stoull(text, nullptr, 0); }

void triple(const std::string& text, uint32_t out[3]) {
    if (std::sscanf(text.c_str(), "%u,%u,%u", &out[0], &out[1], &out[2]) != 3)
        throw std::runtime_error("bad dimensions '" + text + "'");
}

}  // namespace

Truth read_truth(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read truth file " + path);
    Truth truth;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto f = split_tabs(line);
        const std::string& kind = f[0];
        if (kind == "kernel" && f.size() >= 12) {
            TruthKernel k{};
            k.pid = static_cast<uint32_t>(number(f[1]));
            k.correlation = static_cast<uint32_t>(number(f[2]));
            k.start = number(f[4]);
            k.end = number(f[5]);
            triple(f[7], k.grid);
            triple(f[8], k.block);
            k.shared = static_cast<uint32_t>(number(f[9]));
            k.name = f[11];
            if (f.size() >= 14) {  // a graph replay's kernel: graph id, node id (docs/simgpu.md)
                k.graph_id = static_cast<uint32_t>(number(f[12]));
                k.graph_node_id = number(f[13]);
            }
            truth.kernels.push_back(k);
        } else if (kind == "memcpy" && f.size() >= 10) {
            truth.copies.push_back({static_cast<uint32_t>(number(f[1])), static_cast<uint32_t>(number(f[2])),
                                    number(f[4]), number(f[5]), number(f[7]), number(f[8]), number(f[9]), f[6]});
        } else if (kind == "memset" && f.size() >= 9) {
            truth.sets.push_back({static_cast<uint32_t>(number(f[1])), static_cast<uint32_t>(number(f[2])),
                                  number(f[4]), number(f[5]), number(f[7]), number(f[8]),
                                  static_cast<uint32_t>(number(f[6]))});
        } else if ((kind == "alloc" || kind == "free") && f.size() >= 8) {
            truth.memory.push_back({kind == "alloc", static_cast<uint32_t>(number(f[1])), number(f[4]), number(f[6]),
                                    number(f[7]), f[5]});
        } else if (kind == "profiler" && f.size() >= 4) {
            truth.profiler.push_back({static_cast<uint32_t>(number(f[1])), f[2] == "start",
                                      static_cast<uint32_t>(number(f[3]))});
        } else {
            throw std::runtime_error("unreadable truth line: " + line);
        }
    }
    return truth;
}

std::vector<Label> read_labels(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read label file " + path);
    std::vector<Label> labels;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const auto f = split_tabs(line);
        if (f.size() < 4) throw std::runtime_error("unreadable label line: " + line);
        labels.push_back({f[0] == "alloc", number(f[1]), number(f[2]), f[3]});
    }
    return labels;
}

}  // namespace tbdprof::test
