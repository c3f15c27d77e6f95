#define DOCTEST_CONFIG_IMPLEMENT
#include "driver_test_support.h"

#include <dlfcn.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

namespace {
std::string g_truth_path;
}

const std::string& truth_path() {
    return g_truth_path;
}

uint64_t host_monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

CUcontext use_primary_context() {
    REQUIRE_EQ(cuInit(0), CUDA_SUCCESS);
    CUcontext ctx = nullptr;
    REQUIRE_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    REQUIRE_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    return ctx;
}

const TbdsimPrivateApi& private_api() {
    const void* table = nullptr;
    REQUIRE_EQ(cuGetExportTable(&table, &TBDSIM_PRIVATE_API_ID), CUDA_SUCCESS);
    REQUIRE(table != nullptr);
    return *static_cast<const TbdsimPrivateApi*>(table);
}

const void* load_fatbin(const char* name) {
    static std::map<std::string, std::unique_ptr<std::vector<char>>> cache;
    auto& slot = cache[name];
    if (!slot) {
        std::ifstream in(std::string(TEST_FATBIN_DIR) + "/" + name, std::ios::binary);
        REQUIRE_MESSAGE(in.good(), "missing test fat binary " << name);
        slot =
            std::make_unique<std::vector<char>>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return slot->data();
}

RecordLog::RecordLog() {
    slot_ = private_api().add_record_sink(&RecordLog::sink, this);
}
RecordLog::~RecordLog() {
    private_api().remove_record_sink(slot_);
}

void RecordLog::sink(const TbdsimRecord* record, void* user) {
    auto* self = static_cast<RecordLog*>(user);
    std::lock_guard lock(self->mutex_);
    self->records_.push_back(*record);
}

std::vector<TbdsimRecord> RecordLog::records(uint32_t kind) const {
    std::lock_guard lock(mutex_);
    std::vector<TbdsimRecord> out;
    for (const auto& r : records_)
        if (r.kind == kind) out.push_back(r);
    return out;
}

int main(int argc, char** argv) {
    // The second process of the IPC event test (driver_ipc_event_test.cpp): no doctest there.
    if (argc > 1 && std::string(argv[1]) == "--ipc-event-child") return ipc_event_child(argc, argv);
    // The truth file is opened on the driver's first record: set it before anything runs.
    char dir[] = "/tmp/simgpu-driver-test-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    g_truth_path = std::string(dir) + "/truth.tsv";
    setenv("TBDSIM_TRUTH", g_truth_path.c_str(), 1);
    doctest::Context context(argc, argv);
    int rc = context.run();
    std::remove(g_truth_path.c_str());
    rmdir(dir);
    return rc;
}

CUfunction axpy_function() {
    static CUfunction f = [] {
        CUmodule module = nullptr;
        REQUIRE_EQ(cuModuleLoadData(&module, load_fatbin("test_kernels_sm90.fatbin")), CUDA_SUCCESS);
        CUfunction fn = nullptr;
        REQUIRE_EQ(cuModuleGetFunction(&fn, module, "_Z4axpyfPKfPfi"), CUDA_SUCCESS);
        return fn;
    }();
    return f;
}

void* own_symbol(const char* name) {
    void* self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(self != nullptr);
    void* p = dlsym(self, name);
    dlclose(self);
    return p;
}
