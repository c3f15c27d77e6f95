#include "attributes.h"

#include <cstring>

namespace tbdsim::cublaslt {
namespace {

const AttributeSlot* find(std::span<const AttributeSlot> slots, int attribute) {
    for (const AttributeSlot& slot : slots) {
        if (slot.attribute == attribute) return &slot;
    }
    return nullptr;
}

}  // namespace

cublasStatus_t set_attribute(void* state, std::span<const AttributeSlot> slots, int attribute, const void* buf,
                             std::size_t size) {
    const AttributeSlot* slot = find(slots, attribute);
    if (state == nullptr || slot == nullptr || buf == nullptr || size != slot->size) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    std::memcpy(static_cast<char*>(state) + slot->offset, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_attribute(const void* state, std::span<const AttributeSlot> slots, int attribute, void* buf,
                             std::size_t size, std::size_t* written) {
    const AttributeSlot* slot = find(slots, attribute);
    if (state == nullptr || slot == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0) {
        // A size query.
        if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
        *written = slot->size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (buf == nullptr || size != slot->size) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(buf, static_cast<const char*>(state) + slot->offset, size);
    if (written != nullptr) *written = size;
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace tbdsim::cublaslt
