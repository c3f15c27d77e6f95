// JIT linking (cuLink*). Linking resolves device functions across separately compiled units; the
// simulator never runs device code, so what a link produces matters only as a module image to load.
// A link of one unit (a cubin, PTX or a fat binary: what frameworks link when they JIT one kernel
// source) completes with that unit as the image. Several units, and relocatable objects or libraries
// (-rdc device code) that need a real device linker, return CUDA_ERROR_NOT_SUPPORTED at
// cuLinkComplete / cuLinkAddData.
#include "driver_api.h"

#include <fstream>
#include <iterator>
#include <vector>

using namespace tbdsim::driver;

namespace {

struct LinkState {
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<uint8_t> output;  // valid until cuLinkDestroy, as documented
};

std::set<LinkState*>& live_links() {
    static auto* links = new std::set<LinkState*>;
    return *links;
}

LinkState* link_of(CUlinkState handle) {
    auto* link = reinterpret_cast<LinkState*>(handle);
    return live_links().count(link) ? link : nullptr;
}

CUresult add(LinkState& link, CUjitInputType type, const void* data, size_t size) {
    if (type == CU_JIT_INPUT_OBJECT || type == CU_JIT_INPUT_LIBRARY || type == CU_JIT_INPUT_NVVM)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (type != CU_JIT_INPUT_CUBIN && type != CU_JIT_INPUT_PTX && type != CU_JIT_INPUT_FATBINARY)
        return CUDA_ERROR_INVALID_VALUE;
    std::vector<uint8_t> bytes(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
    if (type == CU_JIT_INPUT_PTX && (bytes.empty() || bytes.back() != 0)) bytes.push_back(0);  // NUL-terminated
    ImageError error = ImageError::None;
    if (!parse_module_image(bytes.data(), error))
        return type == CU_JIT_INPUT_PTX ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE;
    link.inputs.push_back(std::move(bytes));
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult CUDAAPI cuLinkCreate(unsigned int count, CUjit_option* options, void** values,
                                      CUlinkState* out) {  // _v2
    if (!out || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    if (!state().initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    auto* link = new LinkState;
    live_links().insert(link);
    *out = reinterpret_cast<CUlinkState>(link);
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLinkAddData(CUlinkState handle, CUjitInputType type, void* data, size_t size, const char*,
                                       unsigned int, CUjit_option*, void**) {  // _v2
    if (!data || size == 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    LinkState* link = link_of(handle);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    return add(*link, type, data, size);
}

SIM_API CUresult CUDAAPI cuLinkAddFile(CUlinkState handle, CUjitInputType type, const char* path, unsigned int,
                                       CUjit_option*, void**) {  // _v2
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    std::ifstream file(path, std::ios::binary);
    if (!file) return CUDA_ERROR_FILE_NOT_FOUND;
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (bytes.empty()) return CUDA_ERROR_INVALID_IMAGE;
    std::lock_guard lock(state().mutex);
    LinkState* link = link_of(handle);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    return add(*link, type, bytes.data(), bytes.size());
}

SIM_API CUresult CUDAAPI cuLinkComplete(CUlinkState handle, void** image, size_t* size) {
    if (!image || !size) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    LinkState* link = link_of(handle);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    if (link->inputs.empty()) return CUDA_ERROR_INVALID_VALUE;
    if (link->inputs.size() > 1) return CUDA_ERROR_NOT_SUPPORTED;  // needs a real device linker
    link->output = link->inputs.front();
    *image = link->output.data();
    *size = link->output.size();
    return CUDA_SUCCESS;
}

SIM_API CUresult CUDAAPI cuLinkDestroy(CUlinkState handle) {
    std::lock_guard lock(state().mutex);
    LinkState* link = link_of(handle);
    if (!link) return CUDA_ERROR_INVALID_HANDLE;
    live_links().erase(link);
    delete link;
    return CUDA_SUCCESS;
}
