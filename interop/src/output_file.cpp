#include "output_file.h"

#include "tbdprof/interop/interop_error.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tbdprof::interop {

PendingOutput::PendingOutput(std::string final_path)
    : final_(std::move(final_path)), temp_(final_ + ".tmp" + std::to_string(::getpid())) {
    std::remove(temp_.c_str());
}

PendingOutput::~PendingOutput() {
    if (!committed_) std::remove(temp_.c_str());
}

void PendingOutput::commit() {
    if (std::rename(temp_.c_str(), final_.c_str()) != 0) {
        throw InteropError("cannot move " + temp_ + " to " + final_ + ": " + std::strerror(errno));
    }
    committed_ = true;
}

}  // namespace tbdprof::interop
