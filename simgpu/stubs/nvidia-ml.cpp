// What the simulated NVML models: initialization and shutdown succeed (PyTorch asserts that
// nvmlInit_v2 does), and a device is found by its PCI bus id (PyTorch asserts that too, with the id
// cudaDeviceGetPCIBusId gave it). Every query on a device stays a "not supported" stub
// (nvidia-ml_stubs.cpp), which PyTorch reads as a GPU without fabric memory or NVLink peers. The
// toolkit ships no nvml.h, so the types are spelled here as the header defines them: int results
// (nvmlReturn_t), an opaque device handle.
#include <map>
#include <mutex>
#include <string>

#define TBD_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kNvmlSuccess = 0;               // NVML_SUCCESS
constexpr int kNvmlErrorInvalidArgument = 2;  // NVML_ERROR_INVALID_ARGUMENT

struct SimulatedDevice {
    std::string pci_bus_id;
};

// One handle per bus id asked for, alive until exit (NVML handles are never freed by callers).
void* device_for(const char* pci_bus_id) {
    static std::mutex mutex;
    static std::map<std::string, SimulatedDevice> devices;
    std::lock_guard lock(mutex);
    SimulatedDevice& device = devices[pci_bus_id];
    device.pci_bus_id = pci_bus_id;
    return &device;
}

}  // namespace

TBD_NVML_EXPORT int nvmlInit_v2() {
    return kNvmlSuccess;
}
TBD_NVML_EXPORT int nvmlInit() {
    return kNvmlSuccess;
}
TBD_NVML_EXPORT int nvmlInitWithFlags(unsigned int) {
    return kNvmlSuccess;
}
TBD_NVML_EXPORT int nvmlShutdown() {
    return kNvmlSuccess;
}

TBD_NVML_EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char* pci_bus_id, void** device) {
    if (pci_bus_id == nullptr || *pci_bus_id == '\0' || device == nullptr) return kNvmlErrorInvalidArgument;
    *device = device_for(pci_bus_id);
    return kNvmlSuccess;
}
