// An output written under a temporary name and renamed into place only when complete, so readers
// never see half a file and a failure leaves nothing behind.
#pragma once

#include <string>

namespace tbdprof::interop {

class PendingOutput {
public:
    explicit PendingOutput(std::string final_path);
    PendingOutput(const PendingOutput&) = delete;
    PendingOutput& operator=(const PendingOutput&) = delete;
    ~PendingOutput();  // removes the temporary unless commit() succeeded

    const std::string& temp_path() const { return temp_; }
    // Renames the temporary onto the final path. Throws InteropError.
    void commit();

private:
    std::string final_;
    std::string temp_;
    bool committed_ = false;
};

}  // namespace tbdprof::interop
