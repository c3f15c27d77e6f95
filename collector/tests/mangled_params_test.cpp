#include <doctest/doctest.h>

#include "tbdprof/collector/mangled_params.h"

using tbdprof::collector::const_pointer_parameters;

TEST_CASE("mangled names: pointer-to-const parameters") {
    CHECK(const_pointer_parameters("_Z4axpyfPKfPfi") == 0b010);
    CHECK(const_pointer_parameters("_Z5touchPfPKfi") == 0b010);
    CHECK(const_pointer_parameters("_ZN7kernels6reluFwEPKfPfi") == 0b001);
    // A function template encodes its return type first; S0_ refers back to an earlier type.
    CHECK(const_pointer_parameters("_Z6kernelIfEvPKT_PS0_i") == 0b001);
    CHECK(const_pointer_parameters("_Z4copyPKfS0_Pf") == 0b011);  // S0_ is the earlier "float const*"
    CHECK(const_pointer_parameters("_Z10touch_pair11PointerPairi") == 0);
    CHECK(const_pointer_parameters("_Z3addPK6__halfS1_PS_") == 0b011);
    CHECK(const_pointer_parameters("_Z1fv") == 0);
}

TEST_CASE("mangled names: what it does not understand gives 0") {
    CHECK(const_pointer_parameters(nullptr) == 0);
    CHECK(const_pointer_parameters("plain_c_kernel") == 0);
    CHECK(const_pointer_parameters("_Z1fPFvvEPKf") == 0b10);  // a function pointer, then float const*
    CHECK(const_pointer_parameters("_Z") == 0);
}
