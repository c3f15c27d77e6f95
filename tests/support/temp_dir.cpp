#include "tbdprof/test_support/temp_dir.h"

#include <stdlib.h>

#include <stdexcept>
#include <system_error>

namespace tbdprof::test {

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tbdprof-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + " failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

}  // namespace tbdprof::test
