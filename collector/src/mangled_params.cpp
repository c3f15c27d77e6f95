#include "tbdprof/collector/mangled_params.h"

#include "tbdprof/collector/itanium_parameters.h"

namespace tbdprof::collector {

uint64_t const_pointer_parameters(const char* name) {
    const MangledSignature signature = parse_mangled_parameters(name);
    if (!signature.understood) return 0;
    uint64_t mask = 0;
    for (size_t i = 0; i < signature.count && i < 64; ++i) {
        if (signature.parameters[i].pointer_to_const) mask |= uint64_t{1} << i;
    }
    return mask;
}

}  // namespace tbdprof::collector
