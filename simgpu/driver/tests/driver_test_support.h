// Helpers shared by the driver tests: a current primary context, fat binaries from the build, and a
// record sink that keeps what the device timeline published.
#pragma once

#include <cuda.h>
#include <doctest/doctest.h>
#include <simgpu/private_api.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#define CHECK_CU(expr) REQUIRE_EQ((expr), CUDA_SUCCESS)

// Host time in ns on CLOCK_MONOTONIC, the clock the simulated device timeline's records use.
uint64_t host_monotonic_ns();

// Checks a completion query (cuEventQuery, cuStreamQuery, ...) on work that ends at `end_ns`. The
// simulated timeline answers CUDA_SUCCESS exactly when the host clock has passed the end, and a
// test thread cannot count on reaching its query before a short kernel ends (under sanitizers on a
// loaded machine it did not), so the query is bracketed by the clock and judged by the bracket.
template <class Query>
void check_query_against_end(Query query, uint64_t end_ns) {
    const uint64_t before_ns = host_monotonic_ns();
    const CUresult result = query();
    const uint64_t after_ns = host_monotonic_ns();
    if (after_ns < end_ns) {
        CHECK_EQ(result, CUDA_ERROR_NOT_READY);
    } else if (before_ns >= end_ns) {
        CHECK_EQ(result, CUDA_SUCCESS);
    } else {
        CHECK((result == CUDA_SUCCESS || result == CUDA_ERROR_NOT_READY));
    }
}

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
