// parse_mangled_parameters: the parser itself is itanium_parser.h.
#include "tbdprof/collector/itanium_parameters.h"

#include "itanium_parser.h"

namespace tbdprof::collector {

MangledSignature parse_mangled_parameters(const char* mangled_name) {
    MangledSignature signature;
    if (mangled_name == nullptr) return signature;
    itanium::Parser parser(mangled_name);
    MangledSignature parsed;
    if (parser.parse(parsed)) {
        signature = parsed;
        signature.understood = true;
    }
    return signature;
}

}  // namespace tbdprof::collector
