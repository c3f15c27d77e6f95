// Naming static functions from the object file after the run.
#include "elf_symbols.h"

#include <doctest/doctest.h>
#include <dlfcn.h>
#include <unistd.h>

namespace {
// Not exported: dladdr cannot name it, the symbol table can.
__attribute__((noinline)) int a_static_function_to_find(int x) { return x * 3 + 1; }
}  // namespace

TEST_CASE("a static function in this test binary is found by its offset") {
    Dl_info info{};
    auto address = reinterpret_cast<void*>(&a_static_function_to_find);
    REQUIRE(dladdr(address, &info) != 0);
    uint64_t offset = reinterpret_cast<uint64_t>(address) - reinterpret_cast<uint64_t>(info.dli_fbase);
    char path[4096] = {};
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    REQUIRE(n > 0);
    tbdprof::trace::ElfSymbolizer symbolizer;
    auto name = symbolizer.function_at(path, offset + 2);  // inside the function, not at its start
    REQUIRE(name.has_value());
    CHECK_NE(name->find("a_static_function_to_find"), std::string::npos);
    CHECK_FALSE(symbolizer.function_at("/nonexistent/file", 100).has_value());
    CHECK_FALSE(symbolizer.function_at("relative/path", 100).has_value());
    CHECK_EQ(a_static_function_to_find(1), 4);
}
