#include "output_file.h"

#include "tbdprof/interop/interop_error.h"

namespace tbdprof::interop {

PendingOutput::PendingOutput(const std::string& final_path, bool force, std::vector<std::string> inputs, bool stream) {
    try {
        out_ = std::make_unique<trace::OutputFile>(final_path, trace::OutputRules{.force = force, .inputs = std::move(inputs), .allow_stream = stream});
    } catch (const trace::OutputFileError& e) {
        throw InteropError(e.what());
    }
}

void PendingOutput::commit() {
    try {
        out_->commit();
    } catch (const trace::OutputFileError& e) {
        throw InteropError(e.what());
    }
}

}  // namespace tbdprof::interop
