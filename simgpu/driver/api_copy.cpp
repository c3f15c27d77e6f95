// Copies and sets. Bytes move at enqueue time (the host is the device's memory); the timeline says
// when the device would have done it. Host-side blocking follows the CUDA documentation's rules.
#include "driver_api.h"
#include "graph_state.h"

#include <cstring>

using namespace tbdsim::driver;

namespace {

enum class Side { Host, Device, Unified };

struct CopyRequest {
    uintptr_t dst = 0;
    uintptr_t src = 0;
    size_t bytes = 0;
    Side dst_side = Side::Unified;
    Side src_side = Side::Unified;
    CUstream stream = nullptr;
    bool per_thread = false;
    bool async = false;
    // 2D copies: rows of `width` bytes with pitches; bytes == width * height.
    size_t width = 0, height = 1, dst_pitch = 0, src_pitch = 0;
};

// A device-side range must lie inside one allocation the driver made (device, managed or pinned), or
// inside adjacent read-write mappings of a reserved range (a tensor may span the chunks an
// expandable segment maps one after another).
bool device_range_ok(uintptr_t p, size_t bytes) {
    const Allocation* a = find_allocation(p);
    if (!a) return false;
    if (a->kind != MemoryKind::Mapped) return p + bytes <= a->address + std::max<size_t>(a->bytes, 1);
    const uintptr_t end = p + bytes;
    while (a->accessible) {
        const uintptr_t mapped_end = a->address + a->bytes;
        if (end <= mapped_end) return true;
        auto next = state().allocations.find(mapped_end);
        if (next == state().allocations.end() || next->second.kind != MemoryKind::Mapped) return false;
        a = &next->second;
    }
    return false;  // no access granted: a real GPU would fault
}

// Work for a capturing stream: async copies and sets become graph nodes; synchronous ones cannot be
// captured (they would have to wait for work that never runs) and invalidate the capture.
// Returns the capture that takes the work, or null with `rc` saying whether it may run.
Capture* capture_transfer(Stream& stream, bool async, CUresult& rc) {
    Capture* capture = capture_for_work(stream, rc);
    if (capture && !async) {
        capture->invalidated = true;
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        return nullptr;
    }
    return capture;
}

// Device-accessible memory as the device sees it: pinned host memory counts as host for the copy kind.
bool is_device_memory(uintptr_t p) {
    const Allocation* a = find_allocation(p);
    return a && a->kind != MemoryKind::PinnedHost;
}

bool is_pinned(uintptr_t p) {
    const Allocation* a = find_allocation(p);
    return a && a->kind == MemoryKind::PinnedHost;
}

TbdsimRecord work_record(TbdsimRecordKind kind, const Stream& s, std::pair<uint64_t, uint64_t> when,
                         bool async) {
    TbdsimRecord r{};
    r.kind = kind;
    r.device = static_cast<uint32_t>(s.context->device->ordinal);
    r.context_id = s.context->id;
    r.stream_id = s.id;
    r.correlation_id = next_correlation_id();
    r.start_ns = when.first;
    r.end_ns = when.second;
    r.is_async = async;
    r.host_launch_ns = now_ns();
    return r;
}

CUresult do_copy(const CopyRequest& req) {
    if (req.bytes == 0) return CUDA_SUCCESS;
    if (!req.dst || !req.src) return CUDA_ERROR_INVALID_VALUE;
    TbdsimRecord record;
    bool host_waits = false;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        Stream* stream = resolve_stream(req.stream, req.per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        size_t dst_extent = req.height > 1 ? req.dst_pitch * (req.height - 1) + req.width : req.bytes;
        size_t src_extent = req.height > 1 ? req.src_pitch * (req.height - 1) + req.width : req.bytes;
        bool dst_device = req.dst_side == Side::Device ||
                          (req.dst_side == Side::Unified && is_device_memory(req.dst));
        bool src_device = req.src_side == Side::Device ||
                          (req.src_side == Side::Unified && is_device_memory(req.src));
        if (req.dst_side == Side::Device && !device_range_ok(req.dst, dst_extent)) return CUDA_ERROR_INVALID_VALUE;
        if (req.src_side == Side::Device && !device_range_ok(req.src, src_extent)) return CUDA_ERROR_INVALID_VALUE;
        if (req.dst_side == Side::Unified && dst_device && !device_range_ok(req.dst, dst_extent))
            return CUDA_ERROR_INVALID_VALUE;
        if (req.src_side == Side::Unified && src_device && !device_range_ok(req.src, src_extent))
            return CUDA_ERROR_INVALID_VALUE;
        TbdsimCopyKind kind = dst_device ? (src_device ? TBDSIM_COPY_DTOD : TBDSIM_COPY_HTOD)
                                         : (src_device ? TBDSIM_COPY_DTOH : TBDSIM_COPY_HTOH);
        CUresult capture_rc = CUDA_SUCCESS;
        if (Capture* capture = capture_transfer(*stream, req.async, capture_rc)) {
            GraphNode& node = add_captured_node(*capture, GraphNode::Kind::Memcpy);
            node.dst = req.dst;
            node.src = req.src;
            node.width = req.height > 1 ? req.width : req.bytes;
            node.height = req.height;
            node.dst_pitch = req.dst_pitch;
            node.src_pitch = req.src_pitch;
            node.copy_kind = kind;
            node.bytes = req.bytes;
            return CUDA_SUCCESS;  // no bytes move until the graph runs
        }
        if (capture_rc != CUDA_SUCCESS) return capture_rc;
        auto when = place_work(*stream, copy_duration_ns(*stream->context->device, kind, req.bytes));
        record = work_record(TBDSIM_RECORD_MEMCPY, *stream, when, req.async);
        record.sub_kind = kind;
        record.address = req.dst;
        record.src_address = req.src;
        record.bytes = req.bytes;
        // Synchronous copies return once done, except device-to-device ones. Async copies into
        // pageable host memory are synchronous too (the DMA engine cannot write pageable memory).
        if (!req.async)
            host_waits = kind != TBDSIM_COPY_DTOD;
        else
            host_waits = kind == TBDSIM_COPY_DTOH && !is_pinned(req.dst);
    }
    if (req.height > 1) {
        for (size_t row = 0; row < req.height; ++row)
            std::memmove(reinterpret_cast<void*>(req.dst + row * req.dst_pitch),
                         reinterpret_cast<const void*>(req.src + row * req.src_pitch), req.width);
    } else {
        std::memmove(reinterpret_cast<void*>(req.dst), reinterpret_cast<const void*>(req.src), req.bytes);
    }
    publish(record);
    if (host_waits) wait_until_ns(record.end_ns);
    return CUDA_SUCCESS;
}

CUresult copy(uintptr_t dst, Side ds, uintptr_t src, Side ss, size_t bytes, CUstream stream,
              bool per_thread, bool async) {
    CopyRequest r;
    r.dst = dst;
    r.src = src;
    r.bytes = bytes;
    r.dst_side = ds;
    r.src_side = ss;
    r.stream = stream;
    r.per_thread = per_thread;
    r.async = async;
    return do_copy(r);
}

Side side_of(CUmemorytype type, CUresult& rc) {
    switch (type) {
    case CU_MEMORYTYPE_HOST: return Side::Host;
    case CU_MEMORYTYPE_DEVICE: return Side::Device;
    case CU_MEMORYTYPE_UNIFIED: return Side::Unified;
    default: rc = CUDA_ERROR_NOT_SUPPORTED; return Side::Host;  // CUDA arrays are not modelled
    }
}

CUresult copy_2d(const CUDA_MEMCPY2D* p, CUstream stream, bool per_thread, bool async) {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    CopyRequest r;
    r.dst_side = side_of(p->dstMemoryType, rc);
    r.src_side = side_of(p->srcMemoryType, rc);
    if (rc != CUDA_SUCCESS) return rc;
    uintptr_t dst_base = r.dst_side == Side::Host ? reinterpret_cast<uintptr_t>(p->dstHost) : p->dstDevice;
    uintptr_t src_base = r.src_side == Side::Host ? reinterpret_cast<uintptr_t>(p->srcHost) : p->srcDevice;
    if (p->WidthInBytes == 0 || p->Height == 0) return CUDA_SUCCESS;
    if (p->dstPitch < p->WidthInBytes + p->dstXInBytes && p->Height > 1) return CUDA_ERROR_INVALID_VALUE;
    if (p->srcPitch < p->WidthInBytes + p->srcXInBytes && p->Height > 1) return CUDA_ERROR_INVALID_VALUE;
    r.dst = dst_base + p->dstY * p->dstPitch + p->dstXInBytes;
    r.src = src_base + p->srcY * p->srcPitch + p->srcXInBytes;
    r.width = p->WidthInBytes;
    r.height = p->Height;
    r.dst_pitch = p->dstPitch;
    r.src_pitch = p->srcPitch;
    r.bytes = r.width * r.height;
    r.stream = stream;
    r.per_thread = per_thread;
    r.async = async;
    return do_copy(r);
}

// Sets `count` elements of `element` bytes (1, 2 or 4) in `height` rows of `pitch` bytes.
CUresult memset_common(CUdeviceptr dst, size_t pitch, unsigned value, unsigned element, size_t count,
                       size_t height, CUstream handle, bool per_thread, bool async) {
    if (count == 0 || height == 0) return CUDA_SUCCESS;
    if (dst % element) return CUDA_ERROR_INVALID_VALUE;
    size_t row_bytes = count * element;
    size_t extent = height > 1 ? pitch * (height - 1) + row_bytes : row_bytes;
    TbdsimRecord record;
    bool host_waits = false;
    {
        std::lock_guard lock(state().mutex);
        Context* ctx = nullptr;
        if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
        Stream* stream = resolve_stream(handle, per_thread);
        if (!stream) return CUDA_ERROR_INVALID_HANDLE;
        if (!device_range_ok(dst, extent)) return CUDA_ERROR_INVALID_VALUE;
        CUresult capture_rc = CUDA_SUCCESS;
        if (Capture* capture = capture_transfer(*stream, async, capture_rc)) {
            GraphNode& node = add_captured_node(*capture, GraphNode::Kind::Memset);
            node.dst = dst;
            node.width = count;
            node.height = height;
            node.dst_pitch = pitch;
            node.value = value;
            node.element = element;
            node.bytes = row_bytes * height;
            return CUDA_SUCCESS;
        }
        if (capture_rc != CUDA_SUCCESS) return capture_rc;
        auto when = place_work(*stream, memset_duration_ns(*stream->context->device, row_bytes * height));
        record = work_record(TBDSIM_RECORD_MEMSET, *stream, when, async);
        record.address = dst;
        record.bytes = row_bytes * height;
        record.memset_value = value;
        host_waits = !async && is_pinned(dst);  // sets of pinned host memory are synchronous
    }
    for (size_t row = 0; row < height; ++row) {
        auto* p = reinterpret_cast<uint8_t*>(dst + row * pitch);
        if (element == 1) {
            std::memset(p, static_cast<int>(value & 0xff), count);
        } else {
            for (size_t i = 0; i < count; ++i) std::memcpy(p + i * element, &value, element);
        }
    }
    publish(record);
    if (host_waits) wait_until_ns(record.end_ns);
    return CUDA_SUCCESS;
}

}  // namespace

// Forward declarations of the per-thread names cuda.h only declares through macros.
extern "C" {
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void*, size_t);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void*, CUdeviceptr, size_t);
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr, CUdeviceptr, size_t);
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void*, size_t, CUstream);
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void*, CUdeviceptr, size_t, CUstream);
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D*);
CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D*);
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D*, CUstream);
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr, unsigned char, size_t);
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr, unsigned short, size_t);
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr, unsigned int, size_t);
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr, size_t, unsigned char, size_t, size_t);
CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr, size_t, unsigned int, size_t, size_t);
CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream);
CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream);
}

#define U(p) reinterpret_cast<uintptr_t>(p)

SIM_API CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) {
    return copy(d, Side::Device, U(s), Side::Host, n, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void* s, size_t n) {
    return copy(d, Side::Device, U(s), Side::Host, n, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoH(void* d, CUdeviceptr s, size_t n) {
    return copy(U(d), Side::Host, s, Side::Device, n, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void* d, CUdeviceptr s, size_t n) {
    return copy(U(d), Side::Host, s, Side::Device, n, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
    return copy(d, Side::Device, s, Side::Device, n, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) {
    return copy(d, Side::Device, s, Side::Device, n, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) {
    return copy(d, Side::Unified, s, Side::Unified, n, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) {
    return copy(d, Side::Unified, s, Side::Unified, n, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream st) {
    return copy(d, Side::Device, U(s), Side::Host, n, st, false, true);
}
SIM_API CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void* s, size_t n, CUstream st) {
    return copy(d, Side::Device, U(s), Side::Host, n, st, true, true);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream st) {
    return copy(U(d), Side::Host, s, Side::Device, n, st, false, true);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void* d, CUdeviceptr s, size_t n, CUstream st) {
    return copy(U(d), Side::Host, s, Side::Device, n, st, true, true);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    return copy(d, Side::Device, s, Side::Device, n, st, false, true);
}
SIM_API CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    return copy(d, Side::Device, s, Side::Device, n, st, true, true);
}
SIM_API CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    return copy(d, Side::Unified, s, Side::Unified, n, st, false, true);
}
SIM_API CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    return copy(d, Side::Unified, s, Side::Unified, n, st, true, true);
}
SIM_API CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D* p) { return copy_2d(p, nullptr, false, false); }
SIM_API CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D* p) { return copy_2d(p, nullptr, true, false); }
SIM_API CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* p) { return copy_2d(p, nullptr, false, false); }
SIM_API CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D* p) {
    return copy_2d(p, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D* p, CUstream st) { return copy_2d(p, st, false, true); }
SIM_API CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* p, CUstream st) {
    return copy_2d(p, st, true, true);
}

SIM_API CUresult CUDAAPI cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
    return memset_common(d, 0, v, 1, n, 1, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) {
    return memset_common(d, 0, v, 1, n, 1, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n) {
    return memset_common(d, 0, v, 2, n, 1, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) {
    return memset_common(d, 0, v, 2, n, 1, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
    return memset_common(d, 0, v, 4, n, 1, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) {
    return memset_common(d, 0, v, 4, n, 1, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
    return memset_common(d, 0, v, 1, n, 1, s, false, true);
}
SIM_API CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
    return memset_common(d, 0, v, 1, n, 1, s, true, true);
}
SIM_API CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
    return memset_common(d, 0, v, 2, n, 1, s, false, true);
}
SIM_API CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
    return memset_common(d, 0, v, 2, n, 1, s, true, true);
}
SIM_API CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
    return memset_common(d, 0, v, 4, n, 1, s, false, true);
}
SIM_API CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
    return memset_common(d, 0, v, 4, n, 1, s, true, true);
}
SIM_API CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) {
    return memset_common(d, pitch, v, 1, w, h, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) {
    return memset_common(d, pitch, v, 1, w, h, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h) {
    return memset_common(d, pitch, v, 4, w, h, nullptr, false, false);
}
SIM_API CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h) {
    return memset_common(d, pitch, v, 4, w, h, nullptr, true, false);
}
SIM_API CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h,
                                           CUstream s) {
    return memset_common(d, pitch, v, 1, w, h, s, false, true);
}
SIM_API CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
                                                size_t h, CUstream s) {
    return memset_common(d, pitch, v, 1, w, h, s, true, true);
}
SIM_API CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h,
                                            CUstream s) {
    return memset_common(d, pitch, v, 4, w, h, s, false, true);
}
SIM_API CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr d, size_t pitch, unsigned int v, size_t w,
                                                 size_t h, CUstream s) {
    return memset_common(d, pitch, v, 4, w, h, s, true, true);
}
