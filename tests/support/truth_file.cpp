#include "tbdprof/test_support/truth_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tbdprof::test {
namespace {

std::vector<std::string> split(const std::string& line, char separator) {
    std::vector<std::string> out;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, separator)) out.push_back(field);
    return out;
}

uint64_t number(const std::string& text) {
    return std::stoull(text, nullptr, 0);
}

void triple(const std::string& text, uint32_t out[3]) {
    const auto parts = split(text, ',');
    if (parts.size() != 3) throw std::runtime_error("bad dimensions '" + text + "'");
    for (size_t i = 0; i < 3; ++i) out[i] = static_cast<uint32_t>(std::stoul(parts[i]));
}

// The fields each kind needs (simgpu/driver/truth.cpp).
size_t fields_needed(const std::string& type) {
    if (type == "kernel")
        return 12;  // kernel pid corr stream start end flops grid block shmem precision name [graph node]
    if (type == "memcpy") return 10;                  // memcpy pid corr stream start end kind bytes src dst
    if (type == "memset") return 9;                   // memset pid corr stream start end value bytes address
    if (type == "alloc" || type == "free") return 8;  // pid corr stream time kind bytes address
    if (type == "profiler") return 4;                 // profiler pid start|stop correlation
    return 0;
}

TruthRecord parse(const std::vector<std::string>& f) {
    TruthRecord r;
    r.type = f[0];
    r.pid = static_cast<uint32_t>(number(f[1]));
    if (r.type == "profiler") {
        r.profiler_start = f[2] == "start";
        r.correlation = number(f[3]);
        return r;
    }
    r.correlation = number(f[2]);
    r.stream = number(f[3]);
    if (r.type == "kernel") {
        r.start = number(f[4]);
        r.end = number(f[5]);
        r.flops = std::stod(f[6]);
        triple(f[7], r.grid);
        triple(f[8], r.block);
        r.shared_mem = static_cast<uint32_t>(number(f[9]));
        r.precision = static_cast<uint32_t>(number(f[10]));
        r.name = f[11];
        if (f.size() >= 14) {
            r.graph_id = static_cast<uint32_t>(number(f[12]));
            r.graph_node_id = number(f[13]);
        }
    } else if (r.type == "memcpy") {
        r.start = number(f[4]);
        r.end = number(f[5]);
        r.kind = f[6];
        r.bytes = number(f[7]);
        r.src = number(f[8]);
        r.address = number(f[9]);
    } else if (r.type == "memset") {
        r.start = number(f[4]);
        r.end = number(f[5]);
        r.value = static_cast<uint32_t>(number(f[6]));
        r.bytes = number(f[7]);
        r.address = number(f[8]);
    } else {  // alloc, free
        r.start = r.end = number(f[4]);
        r.kind = f[5];
        r.bytes = number(f[6]);
        r.address = number(f[7]);
    }
    return r;
}

}  // namespace

std::vector<TruthRecord> read_truth_records(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read truth file " + path);
    std::vector<TruthRecord> records;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto f = split(line, '\t');
        const size_t needed = fields_needed(f[0]);
        if (needed == 0) {
            TruthRecord other;
            other.type = f[0];
            if (f.size() > 1) other.pid = static_cast<uint32_t>(std::strtoul(f[1].c_str(), nullptr, 0));
            records.push_back(other);
            continue;
        }
        if (f.size() < needed) throw std::runtime_error("unreadable truth line: " + line);
        try {
            records.push_back(parse(f));
        } catch (const std::logic_error&) {  // std::stoull and friends
            throw std::runtime_error("unreadable truth line: " + line);
        }
    }
    return records;
}

}  // namespace tbdprof::test
