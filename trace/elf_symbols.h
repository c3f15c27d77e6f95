// Symbols for instruction pointers the collector could not name in the process (dladdr only sees
// exported symbols): read from the object file's own symbol tables after the run, so the target
// never pays for it. Offsets are relative to the module's load address, as frames.offset stores them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tbdprof::trace {

class ElfSymbolizer {
public:
    // The mangled name of the function containing `offset` in the file at `path`, if its .symtab or
    // .dynsym says so. Files are read once and cached; unreadable or stripped files give nothing.
    std::optional<std::string> function_at(const std::string& path, uint64_t offset);

private:
    struct Symbol {
        uint64_t start, size;
        std::string name;
    };
    struct Module {
        bool loaded = false;
        uint64_t first_load_vaddr = 0;  // file offsets become virtual addresses by this base
        std::vector<Symbol> symbols;    // sorted by start
    };
    Module& load(const std::string& path);
    std::map<std::string, Module> modules_;
};

}  // namespace tbdprof::trace
