#include "demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tbdprof::trace {

std::string demangle(std::string_view mangled) {
    if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
    const std::string terminated(mangled);  // __cxa_demangle wants a NUL-terminated string
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> text(
        abi::__cxa_demangle(terminated.c_str(), nullptr, nullptr, &status), &std::free);
    if (status != 0 || !text) return terminated;
    return std::string(text.get());
}

}  // namespace tbdprof::trace
