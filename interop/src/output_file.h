// An interop output (an imported trace, an exported JSON) is written through trace::OutputFile
// (tbdprof/trace/output_file.h): a temporary next to the target, renamed only over a regular file
// that is not an input, and only with --force over an existing one.
#pragma once

#include <tbdprof/trace/output_file.h>

#include <memory>
#include <string>
#include <vector>

namespace tbdprof::interop {

class PendingOutput {
public:
    // Throws InteropError when `final_path` may not be written.
    // `stream`: a character device or FIFO target is written directly (see OutputRules::allow_stream).
    PendingOutput(const std::string& final_path, bool force, std::vector<std::string> inputs, bool stream = false);

    const std::string& temp_path() const { return out_->temp_path(); }
    // Renames the temporary onto the final path. Throws InteropError.
    void commit();

private:
    std::unique_ptr<trace::OutputFile> out_;
};

}  // namespace tbdprof::interop
