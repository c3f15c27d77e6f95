// A private temporary directory for a test, removed with everything in it at scope exit.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace tbdprof::test {

class TempDir {
public:
    TempDir();  // throws std::runtime_error when it cannot be created
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

private:
    std::string path_;
};

}  // namespace tbdprof::test
