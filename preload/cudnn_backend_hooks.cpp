// cudnnBackendExecute as a library call, recorded from the summary its plan got when it was
// finalized (cudnn_backend_summary.h, cudnn_backend_descriptor_hooks.cpp): the graph's operations
// and the engine's notes, so nothing is read back from descriptors the frontend may have destroyed.
// Like the legacy calls (preload/cudnn_hooks.cpp): op and shape from the main operation (a
// convolution pass or matmul; attention_forward / attention_backward for a scaled dot-product
// attention graph; pointwise otherwise), FLOPs by the collector's rules (cudnn_flops.h), the compute
// type TF32 when the engine carries CUDNN_NUMERICAL_NOTE_TENSOR_CORE and the data is FP32, and the
// operands the main operation's inputs (a, b) and the last operation's output (c), found by unique
// id in the variant pack, whose workspace is the call's; each operand's byte extent comes from its
// tensor's dimensions, strides and data type. A plan without a summary (an operation the collector
// does not know) records op pointwise and FLOPs 0.
#include <cudnn.h>

#include <algorithm>

#include "cudnn_backend_summary.h"
#include "cudnn_common.h"
#include "library_call.h"
#include "operand_extent.h"

namespace tbdprof::preload {
namespace {

using cudnn_backend::PlanSummary;
using cudnn_backend::Tensor;

LibraryFunction<decltype(&cudnnBackendGetAttribute)> real_get{"cudnnBackendGetAttribute"};

// The bytes a tensor spans from its pointer, from its dimensions and strides (0 unknown).
uint64_t extent_bytes(const Tensor& t) {
    if (t.strides.size() != t.dims.size()) return 0;
    return strided_extent_bytes(static_cast<int>(t.dims.size()), t.dims.data(), t.strides.data(),
                                element_bytes(t.type));
}

// The variant pack's device pointers by unique id (at most 64 tensors, as the frontends pass).
struct Pack {
    int64_t uids[64] = {};
    void* pointers[64] = {};
    int64_t count = 0;
    void* workspace = nullptr;
    uint64_t address(const Tensor& t) const {
        if (!t.in_device_memory()) return 0;
        for (int64_t i = 0; i < count; ++i) {
            if (uids[i] == t.uid) return reinterpret_cast<uint64_t>(pointers[i]);
        }
        return 0;
    }
};

bool read_pack(cudnnBackendDescriptor_t pack, Pack* out) {
    auto get = real_get.get();
    if (get == nullptr) return false;
    int64_t uids = 0, pointers = 0, workspace = 0;
    if (get(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 64, &uids, out->uids) != CUDNN_STATUS_SUCCESS ||
        get(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 64, &pointers, out->pointers) !=
            CUDNN_STATUS_SUCCESS) {
        return false;
    }
    out->count = std::min<int64_t>({uids, pointers, 64});
    if (get(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, &out->workspace) !=
        CUDNN_STATUS_SUCCESS) {
        out->workspace = nullptr;
    }
    return true;
}

void describe(raw::RawLibraryCall& record, const PlanSummary& plan, cudnnBackendDescriptor_t pack_descriptor) {
    Pack pack;
    const bool have_pack = read_pack(pack_descriptor, &pack);
    if (have_pack && pack.workspace != nullptr) {
        record.workspace = reinterpret_cast<uint64_t>(pack.workspace);
        record.workspace_bytes = static_cast<uint64_t>(plan.workspace_bytes);
    }
    const cudnn_backend::Operation& main = plan.operations[plan.main];
    record.op = plan.op;
    record.m = main.m;
    record.n = main.n;
    record.k = main.k;
    record.batch = main.batch;
    record.flops = plan.flops;
    const cudnnDataType_t type = main.inputs.empty() ? CUDNN_DATA_FLOAT : main.inputs[0].type;
    record.a_type = record.b_type = record.c_type = cuda_type_of(type);
    record.compute_type = type == CUDNN_DATA_DOUBLE                                   ? CUBLAS_COMPUTE_64F
                          : type == CUDNN_DATA_FLOAT && main.main && plan.tensor_core ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                                      : CUBLAS_COMPUTE_32F;
    if (!have_pack) return;
    if (!main.inputs.empty()) record.a = pack.address(main.inputs[0]);
    if (record.a != 0) record.a_bytes = extent_bytes(main.inputs[0]);
    if (main.inputs.size() > 1) record.b = pack.address(main.inputs[1]);
    if (record.b != 0) record.b_bytes = extent_bytes(main.inputs[1]);
    const Tensor& output = plan.operations.back().output;
    record.c = pack.address(output);
    if (record.c != 0) record.c_bytes = extent_bytes(output);
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;

extern "C" TBD_VISIBLE cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                                         cudnnBackendDescriptor_t pack) {
    static LibraryFunction<decltype(&::cudnnBackendExecute)> real{"cudnnBackendExecute"};
    auto fn = real.get();
    if (fn == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    const auto call = [&] { return fn(handle, plan, pack); };
    return record_library_call(call, [&](ThreadState& thread, tbdprof::raw::RawLibraryCall& record) {
        record.name_string = tbdprof::collector::intern_string(thread, "cudnnBackendExecute");
        record.op = tbdprof::raw::LibraryOp::Pointwise;
        record.batch = 1;
        record.stream = reinterpret_cast<uint64_t>(cudnn_stream_of(handle));
        if (auto summary = cudnn_backend::plan_summary(plan); summary != nullptr) describe(record, *summary, pack);
    });
}
