// The bytes a strided tensor spans from its first element: one element past the farthest one,
// (1 + sum over dimensions of (dim - 1) * stride) elements. Packed tensors span elements * size;
// padded or transposed ones span more, broadcast (stride 0) ones less. 0 when a dimension is empty
// or a value is unusable, so the record says "unknown" rather than something wrong.
#pragma once

#include <cstdint>

namespace tbdprof::preload {

inline uint64_t strided_extent_bytes(int dims, const int64_t* dim, const int64_t* stride, int64_t element_bytes) {
    if (dims <= 0 || element_bytes <= 0) return 0;
    int64_t last = 0;
    for (int i = 0; i < dims; ++i) {
        if (dim[i] <= 0 || stride[i] < 0) return 0;
        last += (dim[i] - 1) * stride[i];
    }
    return static_cast<uint64_t>((last + 1) * element_bytes);
}

}  // namespace tbdprof::preload
