// Which parameters of a kernel are pointers to const, read from its Itanium-mangled name:
// `_Z4axpyfPKfPfi` is axpy(float, const float*, float*, int) -> bit 1. A hint for data flow (a
// pointer-to-const parameter is only read). The parse is the Itanium grammar's
// (itanium_parameters.h): substitutions and template parameters are resolved, expressions and
// literals in template arguments are understood. Names it does not understand (extern "C", special
// names) give 0, never a wrong bit.
#pragma once

#include <cstdint>

namespace tbdprof::collector {

// Bit i set when parameter i (i < 64) is a pointer to const. 0 when unknown.
uint64_t const_pointer_parameters(const char* mangled_name);

}  // namespace tbdprof::collector
