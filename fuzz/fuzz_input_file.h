// The fuzz input as a file, for targets whose code under test opens a path (a trace, a viewer load):
// one private directory per fuzzing process, the same file name rewritten for every input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// Writes `data` to this process's input file and returns its path; empty when it cannot be written.
inline std::string write_fuzz_input(const uint8_t* data, size_t size, const char* file_name) {
    static const std::string directory = [] {
        std::string pattern =
            std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tbdprof-fuzz-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr) std::abort();
        return pattern;
    }();
    const std::string path = directory + "/" + file_name;
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) return {};
    std::fwrite(data, 1, size, file);
    std::fclose(file);
    return path;
}
