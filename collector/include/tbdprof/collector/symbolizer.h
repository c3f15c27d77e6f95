// Turns the instruction pointers of recorded stacks into RawFrame records (module, offset, demangled
// symbol from the dynamic symbol table). Runs on the writer thread only: dladdr and the demangler
// allocate and take locks, which a hook must never do.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tbdprof::collector {

class Symbolizer {
public:
    // Appends bytes of finished records to the output.
    using Output = std::function<void(const void* bytes, size_t size)>;

    // Remembers ips not symbolized yet.
    void note_stack(std::span<const uint64_t> ips);
    // Writes a RawFrame (and the RawStrings it needs) for every ip noted since the last call.
    void emit_pending(uint32_t tid, const Output& out);
    // Fork child: the strings emitted so far went to the parent's file.
    void reset();

private:
    uint64_t string_id(uint32_t tid, const std::string& text, const Output& out);

    std::unordered_set<uint64_t> seen_;
    std::vector<uint64_t> pending_;
    std::unordered_set<uint64_t> emitted_strings_;
};

// The demangled form of a mangled C++ name, or the name itself when it is not one.
std::string demangle(const char* name);

}  // namespace tbdprof::collector
