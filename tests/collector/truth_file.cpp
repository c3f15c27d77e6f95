#include "truth_file.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tbdprof::test {

namespace {

std::vector<std::string> split(const std::string& line, char separator) {
    std::vector<std::string> out;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, separator)) out.push_back(field);
    return out;
}

void parse_triple(const std::string& text, uint32_t out[3]) {
    auto parts = split(text, ',');
    for (size_t i = 0; i < 3 && i < parts.size(); ++i) out[i] = static_cast<uint32_t>(std::stoul(parts[i]));
}

uint64_t number(const std::string& s) { return std::stoull(s, nullptr, 0); }

}  // namespace

std::map<uint32_t, std::vector<TruthEvent>> read_truth(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "cannot read truth file %s\n", path.c_str());
        std::exit(2);
    }
    std::map<uint32_t, std::vector<TruthEvent>> by_pid;
    std::string line;
    while (std::getline(in, line)) {
        auto f = split(line, '\t');
        if (f.size() < 5) continue;
        TruthEvent e;
        e.type = f[0];
        e.pid = static_cast<uint32_t>(number(f[1]));
        e.correlation = number(f[2]);
        e.stream = number(f[3]);
        if (e.type == "kernel" && f.size() >= 12) {
            e.start = number(f[4]);
            e.end = number(f[5]);
            e.flops = std::stod(f[6]);
            parse_triple(f[7], e.grid);
            parse_triple(f[8], e.block);
            e.shared_mem = static_cast<uint32_t>(number(f[9]));
            e.precision = static_cast<uint32_t>(number(f[10]));
            e.name = f[11];
        } else if (e.type == "memcpy" && f.size() >= 10) {
            e.start = number(f[4]);
            e.end = number(f[5]);
            e.kind = f[6];
            e.bytes = number(f[7]);
            e.src = number(f[8]);
            e.address = number(f[9]);
        } else if (e.type == "memset" && f.size() >= 9) {
            e.start = number(f[4]);
            e.end = number(f[5]);
            e.value = static_cast<uint32_t>(number(f[6]));
            e.bytes = number(f[7]);
            e.address = number(f[8]);
        } else if ((e.type == "alloc" || e.type == "free") && f.size() >= 8) {
            e.start = e.end = number(f[4]);
            e.kind = f[5];
            e.bytes = number(f[6]);
            e.address = number(f[7]);
        } else {
            continue;
        }
        by_pid[e.pid].push_back(e);
    }
    return by_pid;
}

}  // namespace tbdprof::test
