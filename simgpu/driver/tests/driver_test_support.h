// Helpers shared by the driver tests: a current primary context, fat binaries from the build, and a
// record sink that keeps what the device timeline published.
#pragma once

#include <cuda.h>
#include <doctest/doctest.h>
#include <simgpu/private_api.h>

#include <mutex>
#include <string>
#include <vector>

#define CHECK_CU(expr) REQUIRE_EQ((expr), CUDA_SUCCESS)

// Path of the ground-truth file the test process writes (set in main before the driver starts).
const std::string& truth_path();

// Makes device 0's primary context current on the calling thread.
CUcontext use_primary_context();

const TbdsimPrivateApi& private_api();

// Reads a fat binary built for the tests; the bytes live until the process ends.
const void* load_fatbin(const char* name);

// `axpy(float, const float*, float*, int)` from test_kernels.cu (loaded once).
CUfunction axpy_function();

// The second process of the IPC event test, run as `simgpu_driver_test --ipc-event-child ...`.
int ipc_event_child(int argc, char** argv);

// The simulated driver's own export of `name` (not whatever a preloaded library put first).
void* own_symbol(const char* name);

class RecordLog {
public:
    RecordLog();
    ~RecordLog();
    RecordLog(const RecordLog&) = delete;
    RecordLog& operator=(const RecordLog&) = delete;
    std::vector<TbdsimRecord> records(uint32_t kind) const;

private:
    static void sink(const TbdsimRecord* record, void* user);
    mutable std::mutex mutex_;
    std::vector<TbdsimRecord> records_;
    int slot_ = -1;
};
