// Kernel and symbol names: C++ demangling (Itanium ABI, as nvcc emits for device functions).
#pragma once

#include <string>
#include <string_view>

namespace tbdprof::trace {

// The demangled form of `mangled`, or `mangled` itself when it is not a mangled C++ name
// (extern "C" kernels, names already demangled, garbage).
std::string demangle(std::string_view mangled);

}  // namespace tbdprof::trace
