#include "truth_file.h"

#include <tbdprof/test_support/truth_file.h>

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

}  // namespace

Truth read_truth(const std::string& path) {
    Truth truth;
    for (const TruthRecord& r : read_truth_records(path)) {
        const auto pid = r.pid;
        const auto correlation = static_cast<uint32_t>(r.correlation);
        if (r.type == "kernel") {
            TruthKernel k{};
            k.pid = pid;
            k.correlation = correlation;
            k.start = r.start;
            k.end = r.end;
            for (int i = 0; i < 3; ++i) {
                k.grid[i] = r.grid[i];
                k.block[i] = r.block[i];
            }
            k.shared = r.shared_mem;
            k.name = r.name;
            k.graph_id = r.graph_id;
            k.graph_node_id = r.graph_node_id;
            truth.kernels.push_back(k);
        } else if (r.type == "memcpy") {
            truth.copies.push_back({pid, correlation, r.start, r.end, r.bytes, r.src, r.address, r.kind});
        } else if (r.type == "memset") {
            truth.sets.push_back({pid, correlation, r.start, r.end, r.bytes, r.address, r.value});
        } else if (r.type == "alloc" || r.type == "free") {
            truth.memory.push_back({r.type == "alloc", pid, r.start, r.bytes, r.address, r.kind});
        } else if (r.type == "profiler") {
            truth.profiler.push_back({pid, r.profiler_start, correlation});
        } else {
            throw std::runtime_error("unknown truth line kind '" + r.type + "' in " + path);
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
