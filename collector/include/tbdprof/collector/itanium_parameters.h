// The parameter list of a function from its Itanium C++ ABI mangled name (what nvcc and g++ emit
// for CUDA kernels), parsed by the ABI's grammar: nested and local names, lambdas and unnamed types,
// template arguments (types, X...E expressions, L...E literals, J...E packs), template parameters
// (T_, Tn_), substitutions (S_, Sn_, St, Sa, Sb, Ss, Si, So, Sd), CV-qualifiers, pointers,
// references, arrays, function and pointer-to-member types, vendor qualifiers. Substitutions and
// template parameters are resolved, so `S6_` standing for an earlier `int const*` still says
// "pointer to const". For each parameter it tells whether it is a pointer and whether what it points
// to is const (a read-only hint for data flow).
//
// Runs inside the profiled process: no allocation, bounded recursion and tables. A name it does not
// understand (not `_Z`, a special name such as a thunk, a construct outside the grammar, tables full)
// gives `understood == false`, never a wrong answer.
#pragma once

#include <cstddef>

namespace tbdprof::collector {

struct MangledParameter {
    bool pointer = false;           // a pointer (after resolving substitutions and template parameters)
    bool pointer_to_const = false;  // ... to a const-qualified type
};

inline constexpr size_t kMaxMangledParameters = 64;

struct MangledSignature {
    bool understood = false;
    size_t count = 0;  // parameters (0 for `f(void)`); at most kMaxMangledParameters
    MangledParameter parameters[kMaxMangledParameters];
};

MangledSignature parse_mangled_parameters(const char* mangled_name);

}  // namespace tbdprof::collector
