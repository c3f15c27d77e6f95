// cuptiGetVersion and the texts of CUptiResult codes.
#include <cupti_result.h>
#include <cupti_version.h>

#define TBDSIM_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct ResultText {
    CUptiResult result;
    const char* name;
    const char* message;
};

constexpr ResultText kResultTexts[] = {
    {CUPTI_SUCCESS, "CUPTI_SUCCESS", "No error."},
    {CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER", "One or more of the parameters is invalid."},
    {CUPTI_ERROR_INVALID_DEVICE, "CUPTI_ERROR_INVALID_DEVICE", "The device does not correspond to a valid CUDA device."},
    {CUPTI_ERROR_INVALID_CONTEXT, "CUPTI_ERROR_INVALID_CONTEXT", "The context is NULL or not valid."},
    {CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION", "The current operation cannot be performed due to dependency on other factors."},
    {CUPTI_ERROR_OUT_OF_MEMORY, "CUPTI_ERROR_OUT_OF_MEMORY", "Unable to allocate enough memory to perform the requested operation."},
    {CUPTI_ERROR_API_NOT_IMPLEMENTED, "CUPTI_ERROR_API_NOT_IMPLEMENTED", "The API is not implemented."},
    {CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED", "The maximum limit is reached."},
    {CUPTI_ERROR_NOT_READY, "CUPTI_ERROR_NOT_READY", "The object is not yet ready to perform the requested operation."},
    {CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED", "CUPTI is unable to initialize its connection to the CUDA driver."},
    {CUPTI_ERROR_QUEUE_EMPTY, "CUPTI_ERROR_QUEUE_EMPTY", "The queue is empty."},
    {CUPTI_ERROR_INVALID_HANDLE, "CUPTI_ERROR_INVALID_HANDLE", "Invalid handle (internal)."},
    {CUPTI_ERROR_INVALID_STREAM, "CUPTI_ERROR_INVALID_STREAM", "Invalid stream."},
    {CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND", "Invalid kind."},
    {CUPTI_ERROR_DISABLED, "CUPTI_ERROR_DISABLED", "CUPTI is disabled due to conflicts with other enabled profilers."},
    {CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED", "The operation is not supported."},
    {CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN", "An unknown internal error has occurred."},
};

const ResultText* find(CUptiResult result) {
    for (const ResultText& text : kResultTexts) {
        if (text.result == result) return &text;
    }
    return nullptr;
}

}  // namespace

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
    if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** text) {
    if (text == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    const ResultText* found = find(result);
    if (found == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *text = found->name;
    return CUPTI_SUCCESS;
}

TBDSIM_CUPTI_EXPORT CUptiResult cuptiGetErrorMessage(CUptiResult result, const char** text) {
    if (text == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    const ResultText* found = find(result);
    if (found == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *text = found->message;
    return CUPTI_SUCCESS;
}
