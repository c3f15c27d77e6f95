// Stream memory operations: writes and waits on 32/64-bit values in memory, singly or batched. As
// the simulator moves the bytes of a copy when it is enqueued, a write stores its value when it is
// enqueued (after the stream's earlier copies, which already happened). A wait whose condition holds
// when it is enqueued is an ordering point; one that would have to wait for a later write (from
// another stream or the host) cannot be modelled without executing work in device time, and returns
// CUDA_ERROR_NOT_SUPPORTED instead of blocking the stream forever.
#include "driver_api.h"
#include "graph_state.h"

#include <cstring>

using namespace tbdsim::driver;

extern "C" {
CUresult wait32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned) __asm__("cuStreamWaitValue32_v2_ptsz");
CUresult wait64_ptsz(CUstream, CUdeviceptr, cuuint64_t, unsigned) __asm__("cuStreamWaitValue64_v2_ptsz");
CUresult write32_ptsz(CUstream, CUdeviceptr, cuuint32_t, unsigned) __asm__("cuStreamWriteValue32_v2_ptsz");
CUresult write64_ptsz(CUstream, CUdeviceptr, cuuint64_t, unsigned) __asm__("cuStreamWriteValue64_v2_ptsz");
CUresult batch_ptsz(CUstream, unsigned, CUstreamBatchMemOpParams*, unsigned) __asm__("cuStreamBatchMemOp_v2_ptsz");
}

namespace {

bool word_ok(CUdeviceptr address, size_t bytes) {
    const Allocation* a = find_allocation(address);
    return a && address % bytes == 0 && address + bytes <= a->address + a->bytes && a->accessible;
}

bool condition_holds(uint64_t current, uint64_t value, unsigned flags, bool wide) {
    switch (flags & 0xf) {
        case CU_STREAM_WAIT_VALUE_GEQ:
            return wide ? static_cast<int64_t>(current - value) >= 0
                        : static_cast<int32_t>(static_cast<uint32_t>(current) - static_cast<uint32_t>(value)) >= 0;
        case CU_STREAM_WAIT_VALUE_EQ:
            return current == value;
        case CU_STREAM_WAIT_VALUE_AND:
            return (current & value) != 0;
        case CU_STREAM_WAIT_VALUE_NOR:
            return (wide ? ~(current | value) : ~static_cast<uint32_t>(current | value)) != 0;
        default:
            return false;
    }
}

// One operation on `stream`; caller holds the mutex and checked the stream.
CUresult one_op(Stream& stream, const CUstreamBatchMemOpParams& op) {
    switch (op.operation) {
        case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        case CU_STREAM_MEM_OP_WRITE_VALUE_64: {
            const bool wide = op.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
            const size_t bytes = wide ? 8 : 4;
            if (!word_ok(op.writeValue.address, bytes)) return CUDA_ERROR_INVALID_VALUE;
            place_work(stream, 0);
            void* at = reinterpret_cast<void*>(static_cast<uintptr_t>(op.writeValue.address));
            if (wide)
                std::memcpy(at, &op.writeValue.value64, 8);
            else
                std::memcpy(at, &op.writeValue.value, 4);
            return CUDA_SUCCESS;
        }
        case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        case CU_STREAM_MEM_OP_WAIT_VALUE_64: {
            const bool wide = op.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64;
            const size_t bytes = wide ? 8 : 4;
            if ((op.waitValue.flags & 0xf) > CU_STREAM_WAIT_VALUE_NOR || !word_ok(op.waitValue.address, bytes))
                return CUDA_ERROR_INVALID_VALUE;
            uint64_t current = 0;
            std::memcpy(&current, reinterpret_cast<const void*>(static_cast<uintptr_t>(op.waitValue.address)), bytes);
            const uint64_t value = wide ? op.waitValue.value64 : op.waitValue.value;
            if (!condition_holds(current, value, op.waitValue.flags, wide)) return CUDA_ERROR_NOT_SUPPORTED;
            place_work(stream, 0);
            return CUDA_SUCCESS;
        }
        case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
        case CU_STREAM_MEM_OP_BARRIER:
            place_work(stream, 0);
            return CUDA_SUCCESS;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult batch(CUstream handle, unsigned count, const CUstreamBatchMemOpParams* ops, unsigned flags, bool per_thread) {
    if ((count && !ops) || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(state().mutex);
    Context* ctx = nullptr;
    if (CUresult rc = require_context(ctx); rc != CUDA_SUCCESS) return rc;
    Stream* stream = resolve_stream(handle, per_thread);
    if (!stream) return CUDA_ERROR_INVALID_HANDLE;
    if (CUresult rc = check_not_capturing(*stream); rc != CUDA_SUCCESS) return rc;  // memop nodes: not modelled
    for (unsigned i = 0; i < count; ++i)
        if (CUresult rc = one_op(*stream, ops[i]); rc != CUDA_SUCCESS) return rc;
    return CUDA_SUCCESS;
}

CUresult wait(CUstream s, CUdeviceptr address, uint64_t value, unsigned flags, bool wide, bool per_thread) {
    CUstreamBatchMemOpParams op{};
    op.waitValue.operation = wide ? CU_STREAM_MEM_OP_WAIT_VALUE_64 : CU_STREAM_MEM_OP_WAIT_VALUE_32;
    op.waitValue.address = address;
    if (wide)
        op.waitValue.value64 = value;
    else
        op.waitValue.value = static_cast<cuuint32_t>(value);
    op.waitValue.flags = flags;
    return batch(s, 1, &op, 0, per_thread);
}

CUresult write(CUstream s, CUdeviceptr address, uint64_t value, unsigned flags, bool wide, bool per_thread) {
    if (flags & ~unsigned(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) return CUDA_ERROR_INVALID_VALUE;
    CUstreamBatchMemOpParams op{};
    op.writeValue.operation = wide ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = address;
    if (wide)
        op.writeValue.value64 = value;
    else
        op.writeValue.value = static_cast<cuuint32_t>(value);
    op.writeValue.flags = flags;
    return batch(s, 1, &op, 0, per_thread);
}

}  // namespace

SIM_API CUresult CUDAAPI cuStreamWaitValue32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) {  // _v2
    return wait(s, a, v, f, false, false);
}
SIM_API CUresult wait32_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) {
    return wait(s, a, v, f, false, true);
}
SIM_API CUresult CUDAAPI cuStreamWaitValue64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f) {  // _v2
    return wait(s, a, v, f, true, false);
}
SIM_API CUresult wait64_ptsz(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f) {
    return wait(s, a, v, f, true, true);
}
SIM_API CUresult CUDAAPI cuStreamWriteValue32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) {  // _v2
    return write(s, a, v, f, false, false);
}
SIM_API CUresult write32_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) {
    return write(s, a, v, f, false, true);
}
SIM_API CUresult CUDAAPI cuStreamWriteValue64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f) {  // _v2
    return write(s, a, v, f, true, false);
}
SIM_API CUresult write64_ptsz(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f) {
    return write(s, a, v, f, true, true);
}
SIM_API CUresult CUDAAPI cuStreamBatchMemOp(CUstream s, unsigned count, CUstreamBatchMemOpParams* ops,
                                            unsigned flags) {  // _v2
    return batch(s, count, ops, flags, false);
}
SIM_API CUresult batch_ptsz(CUstream s, unsigned count, CUstreamBatchMemOpParams* ops, unsigned flags) {
    return batch(s, count, ops, flags, true);
}
