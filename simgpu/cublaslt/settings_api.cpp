// cuBLASLt's process-wide settings and its emulation descriptor: the logger (level, mask, callback,
// file), the heuristics cache capacity and the CPU instruction mask are stored and returned as
// documented; the cost model does not use them. The emulation descriptor keeps its attributes like
// the other descriptors (attributes.h).
#include <cublasLt.h>

#include <cstddef>
#include <cstdio>
#include <mutex>
#include <new>

#include "attributes.h"
#include "descriptors.h"

#define TBDSIM_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using tbdsim::cublaslt::AttributeSlot;

struct Settings {
    std::mutex mutex;
    int log_level = 0;
    int log_mask = 0;
    bool log_disabled = false;
    cublasLtLoggerCallback_t callback = nullptr;
    FILE* file = nullptr;
    bool own_file = false;                    // opened by cublasLtLoggerOpenFile
    size_t heuristics_cache_capacity = 8192;  // the documented default
    unsigned cpu_instructions_mask = 0;
};

Settings& settings() {
    static Settings* instance = new Settings;  // never destroyed: usable from exit handlers
    return *instance;
}

struct EmulationState {
    int32_t strategy = 0;
    int32_t special_values = 0xFFFF;
    int32_t mantissa_control = 0;
    int32_t max_mantissa_bit_count = 0;
    int32_t mantissa_bit_offset = 0;
    int32_t* mantissa_bit_count_pointer = nullptr;
};
static_assert(sizeof(EmulationState) <= sizeof(cublasLtEmulationDescOpaque_t));

EmulationState* state_of(cublasLtEmulationDesc_t desc) {
    return desc != nullptr ? std::launder(reinterpret_cast<EmulationState*>(desc)) : nullptr;
}

#define TBDSIM_SLOT(attribute, field)                                             \
    AttributeSlot {                                                               \
        attribute, offsetof(EmulationState, field), sizeof(EmulationState::field) \
    }
constexpr AttributeSlot kSlots[] = {
    TBDSIM_SLOT(CUBLASLT_EMULATION_DESC_STRATEGY, strategy),
    TBDSIM_SLOT(CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT, special_values),
    TBDSIM_SLOT(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL, mantissa_control),
    TBDSIM_SLOT(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT, max_mantissa_bit_count),
    TBDSIM_SLOT(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET, mantissa_bit_offset),
    TBDSIM_SLOT(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, mantissa_bit_count_pointer),
};
#undef TBDSIM_SLOT

void close_own_file(Settings& s) {
    if (s.own_file && s.file != nullptr) std::fclose(s.file);
    s.file = nullptr;
    s.own_file = false;
}

}  // namespace

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtLoggerSetCallback(cublasLtLoggerCallback_t callback) {
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.callback = callback;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtLoggerSetFile(FILE* file) {
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    close_own_file(s);
    s.file = file;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtLoggerOpenFile(const char* log_file) {
    if (log_file == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    FILE* file = std::fopen(log_file, "a");
    if (file == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    close_own_file(s);
    s.file = file;
    s.own_file = true;
    return CUBLAS_STATUS_SUCCESS;
}

// Levels 0 (off) to 5 (API trace), as documented.
TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtLoggerSetLevel(int level) {
    if (level < 0 || level > 5) return CUBLAS_STATUS_INVALID_VALUE;
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.log_level = level;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtLoggerSetMask(int mask) {
    if (mask < 0 || mask > 31) return CUBLAS_STATUS_INVALID_VALUE;
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.log_mask = mask;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtLoggerForceDisable() {
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.log_disabled = true;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtHeuristicsCacheGetCapacity(size_t* capacity) {
    if (capacity == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    *capacity = s.heuristics_cache_capacity;
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtHeuristicsCacheSetCapacity(size_t capacity) {
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.heuristics_cache_capacity = capacity;
    return CUBLAS_STATUS_SUCCESS;
}

// Returns the previous mask, as documented.
TBDSIM_CUBLASLT_EXPORT unsigned cublasLtDisableCpuInstructionsSetMask(unsigned mask) {
    Settings& s = settings();
    std::lock_guard<std::mutex> lock(s.mutex);
    const unsigned previous = s.cpu_instructions_mask;
    s.cpu_instructions_mask = mask;
    return previous;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t desc, size_t size) {
    if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < sizeof(cublasLtEmulationDescOpaque_t)) return CUBLAS_STATUS_ALLOC_FAILED;
    new (desc) EmulationState{};
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtEmulationDescCreate(cublasLtEmulationDesc_t* desc) {
    return tbdsim::cublaslt::create_descriptor(desc, [](cublasLtEmulationDesc_t storage) {
        return cublasLtEmulationDescInit_internal(storage, sizeof(*storage));
    });
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtEmulationDescDestroy(cublasLtEmulationDesc_t desc) {
    delete desc;  // the state is trivially destructible
    return CUBLAS_STATUS_SUCCESS;
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t desc,
                                                                        cublasLtEmulationDescAttributes_t attribute,
                                                                        const void* buf, size_t size) {
    return tbdsim::cublaslt::set_attribute(state_of(desc), kSlots, attribute, buf, size);
}

TBDSIM_CUBLASLT_EXPORT cublasStatus_t cublasLtEmulationDescGetAttribute(cublasLtEmulationDesc_t desc,
                                                                        cublasLtEmulationDescAttributes_t attribute,
                                                                        void* buf, size_t size, size_t* written) {
    return tbdsim::cublaslt::get_attribute(state_of(desc), kSlots, attribute, buf, size, written);
}
