// The one exception type interop throws for bad input: the message is meant for the user as is.
#pragma once

#include <stdexcept>

namespace tbdprof::interop {

class InteropError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace tbdprof::interop
