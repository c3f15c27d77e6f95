#include "registration.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "context.h"

using namespace tbdsim::rt;

namespace {

// The wrapper nvcc emits as __fatDeviceText and passes to __cudaRegisterFatBinary.
struct FatbinWrapper {
    int magic;    // kFatbinWrapperMagic
    int version;  // 1; 2 for relocatable device code linked by nvlink
    const unsigned long long* data;  // the fat binary itself (header magic 0xBA55ED50)
    void* filename_or_fatbins;
};
constexpr int kFatbinWrapperMagic = 0x466243b1;

struct FatBinary {
    const void* image = nullptr;
    std::once_flag load_once;
    cudaError_t load_error = cudaSuccess;
    CUlibrary library = nullptr;
    bool unregistered = false;
};

struct RegisteredFunction {
    FatBinary* binary = nullptr;
    std::string device_name;
    CUkernel kernel = nullptr;  // resolved on first use, under the registry mutex
};

struct RegisteredVariable {
    FatBinary* binary = nullptr;
    std::string device_name;
    size_t size = 0;
    void** managed_host_pointer = nullptr;  // __managed__: where the host code reads the address
};

struct Registry {
    std::mutex mutex;
    std::unordered_map<const void*, RegisteredFunction> functions;  // by host stub
    std::unordered_map<const void*, const void*> stub_by_kernel;     // CUkernel -> host stub
    std::unordered_map<const void*, RegisteredVariable> variables;   // by host shadow address
};

// Leaked on purpose: __cudaUnregisterFatBinary runs from atexit handlers, possibly after the
// static destructors of this library.
Registry& registry() {
    static auto* instance = new Registry;
    return *instance;
}

cudaError_t load_fat_binary(FatBinary& binary) {
    std::call_once(binary.load_once, [&binary] {
        binary.load_error = driver_init();
        if (binary.load_error != cudaSuccess) return;
        binary.load_error = call_driver(driver_api(false).cuLibraryLoadData, &binary.library, binary.image,
                                        nullptr, nullptr, 0u, nullptr, nullptr, 0u);
        // A fat binary without code for this device: the runtime's name for it.
        if (binary.load_error == cudaErrorInvalidKernelImage) binary.load_error = cudaErrorNoKernelImageForDevice;
    });
    return binary.load_error;
}

// Finds the registration for a host stub or for a kernel handle we gave out. Registry locked.
RegisteredFunction* find_function(Registry& reg, const void* host_function_or_kernel) {
    auto found = reg.functions.find(host_function_or_kernel);
    if (found != reg.functions.end()) return &found->second;
    auto stub = reg.stub_by_kernel.find(host_function_or_kernel);
    if (stub != reg.stub_by_kernel.end()) return &reg.functions.at(stub->second);
    return nullptr;
}

}  // namespace

namespace tbdsim::rt {

cudaError_t kernel_for_host_function(const void* host_function_or_kernel, CUkernel* kernel) {
    if (host_function_or_kernel == nullptr) return cudaErrorInvalidDeviceFunction;
    Registry& reg = registry();
    FatBinary* binary = nullptr;
    {
        std::lock_guard lock(reg.mutex);
        RegisteredFunction* function = find_function(reg, host_function_or_kernel);
        if (function == nullptr) return cudaErrorInvalidDeviceFunction;
        if (function->kernel != nullptr) {
            *kernel = function->kernel;
            return cudaSuccess;
        }
        binary = function->binary;
    }
    cudaError_t error = load_fat_binary(*binary);  // outside the lock: loading may take a while
    if (error != cudaSuccess) return error;
    std::lock_guard lock(reg.mutex);
    RegisteredFunction* function = find_function(reg, host_function_or_kernel);
    if (function->kernel == nullptr) {
        error = call_driver(driver_api(false).cuLibraryGetKernel, &function->kernel, binary->library,
                            function->device_name.c_str());
        if (error == cudaErrorSymbolNotFound) error = cudaErrorInvalidDeviceFunction;
        if (error != cudaSuccess) return error;
        reg.stub_by_kernel[function->kernel] = host_function_or_kernel;
    }
    *kernel = function->kernel;
    return cudaSuccess;
}

cudaError_t function_in_current_context(const void* host_function_or_kernel, CUfunction* function) {
    CUkernel kernel = nullptr;
    cudaError_t error = kernel_for_host_function(host_function_or_kernel, &kernel);
    if (error != cudaSuccess) return error;
    return call_driver(driver_api(false).cuKernelGetFunction, function, kernel);
}

const char* device_name_of(const void* host_function_or_kernel) {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    RegisteredFunction* function = find_function(reg, host_function_or_kernel);
    return function ? function->device_name.c_str() : nullptr;
}

cudaError_t variable_address(const void* symbol, CUdeviceptr* address, size_t* size) {
    Registry& reg = registry();
    RegisteredVariable variable;
    {
        std::lock_guard lock(reg.mutex);
        auto found = reg.variables.find(symbol);
        if (found == reg.variables.end()) {
            // A __managed__ variable named in host code is its unified address (what its shadow
            // pointer holds once __cudaInitModule ran), not the registered shadow.
            found = std::find_if(reg.variables.begin(), reg.variables.end(), [&](const auto& entry) {
                const RegisteredVariable& v = entry.second;
                return v.managed_host_pointer != nullptr && *v.managed_host_pointer == symbol;
            });
        }
        if (found == reg.variables.end()) return cudaErrorInvalidSymbol;
        variable = found->second;
    }
    cudaError_t error = load_fat_binary(*variable.binary);
    if (error != cudaSuccess) return error;
    size_t bytes = 0;
    error = call_driver(driver_api(false).cuLibraryGetGlobal, address, &bytes, variable.binary->library,
                        variable.device_name.c_str());
    if (error == cudaErrorSymbolNotFound) return cudaErrorInvalidSymbol;
    *size = bytes;
    return error;
}

}  // namespace tbdsim::rt

// ---- entry points called by nvcc-generated host code ----------------------------------------------
// (C linkage: crt/host_runtime.h declares them, but only for code nvcc compiles.)

extern "C" {

TBDSIM_CUDART_EXPORT void** __cudaRegisterFatBinary(void* fatCubin) {
    auto* binary = new FatBinary;
    const auto* wrapper = static_cast<const FatbinWrapper*>(fatCubin);
    // Accept a bare fat binary too (some tools register one directly).
    binary->image = wrapper->magic == kFatbinWrapperMagic ? static_cast<const void*>(wrapper->data) : fatCubin;
    return reinterpret_cast<void**>(binary);
}

TBDSIM_CUDART_EXPORT void __cudaRegisterFatBinaryEnd(void** /*fatCubinHandle*/) {
    // Lazy loading (the CUDA 12+ default): nothing to do until a kernel or variable is used.
}

TBDSIM_CUDART_EXPORT void __cudaUnregisterFatBinary(void** fatCubinHandle) {
    // Runs from atexit: the driver may already be shutting down, so the CUlibrary is left to the
    // process exit rather than unloaded; its registrations are dropped so stale stubs fail cleanly.
    auto* binary = reinterpret_cast<FatBinary*>(fatCubinHandle);
    if (binary == nullptr) return;
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    binary->unregistered = true;
    std::erase_if(reg.functions, [binary](const auto& entry) { return entry.second.binary == binary; });
    std::erase_if(reg.stub_by_kernel, [&reg](const auto& entry) { return !reg.functions.contains(entry.second); });
    std::erase_if(reg.variables, [binary](const auto& entry) { return entry.second.binary == binary; });
}

TBDSIM_CUDART_EXPORT void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* /*deviceFun*/,
                                                 const char* deviceName, int /*thread_limit*/, uint3* /*tid*/,
                                                 uint3* /*bid*/, dim3* /*bDim*/, dim3* /*gDim*/, int* /*wSize*/) {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    RegisteredFunction& function = reg.functions[hostFun];
    function.binary = reinterpret_cast<FatBinary*>(fatCubinHandle);
    function.device_name = deviceName;
    function.kernel = nullptr;
}

TBDSIM_CUDART_EXPORT void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* /*deviceAddress*/,
                                            const char* deviceName, int /*ext*/, size_t size, int /*constant*/,
                                            int /*global*/) {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    reg.variables[hostVar] = RegisteredVariable{reinterpret_cast<FatBinary*>(fatCubinHandle), deviceName, size, nullptr};
}

TBDSIM_CUDART_EXPORT void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress,
                                                   char* /*deviceAddress*/, const char* deviceName, int /*ext*/,
                                                   size_t size, int /*constant*/, int /*global*/) {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    reg.variables[hostVarPtrAddress] =
        RegisteredVariable{reinterpret_cast<FatBinary*>(fatCubinHandle), deviceName, size, hostVarPtrAddress};
}

// Called before the first access to a __managed__ variable: load the module and point the host
// shadows of its managed variables at their unified addresses.
TBDSIM_CUDART_EXPORT char __cudaInitModule(void** fatCubinHandle) {
    auto* binary = reinterpret_cast<FatBinary*>(fatCubinHandle);
    if (binary == nullptr || bind_current_context() != cudaSuccess) return 0;
    if (load_fat_binary(*binary) != cudaSuccess) return 0;
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    for (auto& [symbol, variable] : reg.variables) {
        if (variable.binary != binary || variable.managed_host_pointer == nullptr) continue;
        CUdeviceptr address = 0;
        size_t bytes = 0;
        if (call_driver(driver_api(false).cuLibraryGetManaged, &address, &bytes, binary->library,
                        variable.device_name.c_str()) != cudaSuccess) {
            return 0;
        }
        *variable.managed_host_pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
    }
    return 1;
}

}  // extern "C"
