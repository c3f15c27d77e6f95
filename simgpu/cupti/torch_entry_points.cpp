// CUPTI functions that libtorch_cpu.so (Kineto, behind torch.profiler) links but the simulated CUPTI
// does not model: fine-grained API selection, device timestamps of CUDA events, activity attributes
// and callback names. They exist so that PyTorch loads; each returns CUPTI_ERROR_NOT_SUPPORTED and
// names itself in TBDSIM_NOT_MODELLED (simgpu/not_modelled.h), which Kineto treats as an unavailable
// feature. tbdprof's own collector uses none of them.
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <simgpu/not_modelled.h>

#define TBDSIM_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

CUptiResult not_supported(const char* function) {
    tbdsim_not_modelled(function, "CUPTI_ERROR_NOT_SUPPORTED");
    return CUPTI_ERROR_NOT_SUPPORTED;
}

}  // namespace

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId, uint8_t) {
    return not_supported("cuptiActivityEnableDriverApi");
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId, uint8_t) {
    return not_supported("cuptiActivityEnableRuntimeApi");
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t) {
    return not_supported("cuptiActivityEnableCudaEventDeviceTimestamps");
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t*, void*) {
    return not_supported("cuptiActivitySetAttribute");
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain, uint32_t, const char** name) {
    if (name != nullptr) *name = nullptr;
    return not_supported("cuptiGetCallbackName");
}
