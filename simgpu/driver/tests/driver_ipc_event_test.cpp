// IPC event handles (api_ipc.cpp): an interprocess event exported by this process and opened by a
// second one (this test binary again, run with --ipc-event-child) orders the second process's work
// after the first's, and both see its state.
#include "driver_test_support.h"

#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace {

std::string to_hex(const void* data, size_t size) {
    std::string out;
    char byte[3];
    for (size_t i = 0; i < size; ++i) {
        std::snprintf(byte, sizeof byte, "%02x", static_cast<const unsigned char*>(data)[i]);
        out += byte;
    }
    return out;
}

bool from_hex(const char* text, void* data, size_t size) {
    if (std::strlen(text) != 2 * size) return false;
    for (size_t i = 0; i < size; ++i) {
        unsigned value = 0;
        if (std::sscanf(text + 2 * i, "%2x", &value) != 1) return false;
        static_cast<unsigned char*>(data)[i] = static_cast<unsigned char>(value);
    }
    return true;
}

}  // namespace

// The second process: argv = {exe, --ipc-event-child, HANDLE_HEX, KERNEL_END_NS}. Exit codes name the
// check that failed.
int ipc_event_child(int argc, char** argv) {
    if (argc != 4) return 10;
    CUipcEventHandle handle{};
    if (!from_hex(argv[2], &handle, sizeof handle)) return 11;
    const uint64_t kernel_end = std::strtoull(argv[3], nullptr, 10);
    CUdevice device = 0;
    CUcontext ctx = nullptr;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, device) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 12;
    CUevent event = nullptr;
    if (cuIpcOpenEventHandle(&event, handle) != CUDA_SUCCESS || event == nullptr) return 13;
    // The parent's record is that of a kernel still running in device time.
    const uint64_t before = host_monotonic_ns();
    const CUresult query = cuEventQuery(event);
    const uint64_t after = host_monotonic_ns();
    if (after < kernel_end && query != CUDA_ERROR_NOT_READY) return 14;
    if (before >= kernel_end && query != CUDA_SUCCESS) return 15;
    // Opened events do not time, as documented.
    float ms = 0;
    if (cuEventElapsedTime(&ms, event, event) != CUDA_ERROR_INVALID_HANDLE) return 16;
    // This process's work waits for the other's.
    CUstream stream = nullptr;
    CUdeviceptr memory = 0;
    if (cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS || cuMemAlloc(&memory, 4096) != CUDA_SUCCESS)
        return 17;
    CUevent own = nullptr;
    if (cuEventCreate(&own, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return 18;
    if (cuStreamWaitEvent(stream, event, 0) != CUDA_SUCCESS || cuEventRecord(own, stream) != CUDA_SUCCESS) return 19;
    if (cuEventSynchronize(own) != CUDA_SUCCESS || host_monotonic_ns() < kernel_end) return 20;  // waited for it
    if (cuEventSynchronize(event) != CUDA_SUCCESS || cuEventQuery(event) != CUDA_SUCCESS) return 21;
    if (cuEventDestroy(event) != CUDA_SUCCESS || cuEventDestroy(own) != CUDA_SUCCESS) return 22;
    return 0;
}

TEST_CASE("IPC event handles: another process sees the record and waits for it") {
    use_primary_context();
    CUevent plain = nullptr, timed_ipc = nullptr, event = nullptr;
    CHECK_CU(cuEventCreate(&plain, CU_EVENT_DISABLE_TIMING));
    CUipcEventHandle handle{};
    CHECK_EQ(cuIpcGetEventHandle(&handle, plain), CUDA_ERROR_INVALID_VALUE);  // not interprocess
    CHECK_EQ(cuEventCreate(&timed_ipc, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuIpcGetEventHandle(nullptr, plain), CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cuEventCreate(&event, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    CHECK_CU(cuIpcGetEventHandle(&handle, event));
    CUevent same_process = nullptr;
    CHECK_EQ(cuIpcOpenEventHandle(&same_process, handle), CUDA_ERROR_INVALID_CONTEXT);
    CUipcEventHandle garbage{};
    CHECK_EQ(cuIpcOpenEventHandle(&same_process, garbage), CUDA_ERROR_INVALID_HANDLE);
    CUdevice device = 0;
    int supported = 0;
    CHECK_CU(cuDeviceGet(&device, 0));
    CHECK_CU(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, device));
    CHECK_EQ(supported, 1);

    // A kernel of about 1.5 s of device time (0.6 us a wave of 264 blocks of 1024 threads), then the
    // record: the child starts long before the record completes.
    RecordLog log;
    CUstream stream = nullptr;
    CHECK_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x = 0, y = 0;
    CHECK_CU(cuMemAlloc(&x, 4096));
    CHECK_CU(cuMemAlloc(&y, 4096));
    float a = 2.0f;
    int n = 1024;
    void* params[] = {&a, &x, &y, &n};
    CHECK_CU(cuLaunchKernel(axpy_function(), 660000000u, 1, 1, 1024, 1, 1, 0, stream, params, nullptr));
    CHECK_CU(cuEventRecord(event, stream));
    const auto kernels = log.records(TBDSIM_RECORD_KERNEL);
    REQUIRE_EQ(kernels.size(), 1u);
    const uint64_t kernel_end = kernels[0].end_ns;
    check_query_against_end([&] { return cuEventQuery(event); }, kernel_end);

    const std::string hex = to_hex(&handle, sizeof handle), end = std::to_string(kernel_end);
    char self[4096] = {};
    REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
    char flag[] = "--ipc-event-child";
    char* child_argv[] = {self, flag, const_cast<char*>(hex.c_str()), const_cast<char*>(end.c_str()), nullptr};
    pid_t child = 0;
    REQUIRE_EQ(posix_spawn(&child, self, nullptr, nullptr, child_argv, environ), 0);
    int status = 0;
    REQUIRE_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_MESSAGE(WEXITSTATUS(status) == 0, "the child's check " << WEXITSTATUS(status) << " failed");
    CHECK_EQ(cuEventQuery(event), CUDA_SUCCESS);  // the child waited until it completed
    CHECK_CU(cuEventDestroy(event));
    CHECK_CU(cuEventDestroy(plain));
    CHECK_CU(cuMemFree(x));
    CHECK_CU(cuMemFree(y));
    CHECK_CU(cuStreamDestroy(stream));
}
