// Set/Get of descriptor attributes the way cuBLASLt documents them, driven by a table of where each
// attribute lives in the descriptor's state: the buffer size must match the attribute's exactly, and
// a Get with size 0 reports the size needed. One implementation for matmul descriptors, matrix
// layouts and preferences.
#pragma once

#include <cublas_api.h>

#include <cstddef>
#include <span>

namespace tbdsim::cublaslt {

struct AttributeSlot {
    int attribute;
    std::size_t offset;  // in the state struct
    std::size_t size;    // bytes, the attribute's documented type
};

cublasStatus_t set_attribute(void* state, std::span<const AttributeSlot> slots, int attribute, const void* buf,
                             std::size_t size);
cublasStatus_t get_attribute(const void* state, std::span<const AttributeSlot> slots, int attribute, void* buf,
                             std::size_t size, std::size_t* written);

}  // namespace tbdsim::cublaslt
