// What finalized backend descriptors copy for execution: an operation's tensors, mode and FLOPs, a
// graph's operations, an engine's index and workspace. Frontends (PyTorch's cudnn frontend among
// them) destroy pointwise, matmul and operation descriptors once the next level is built, so each
// level keeps its own copy. Shared by backend_execute.cpp (finalization, heuristics, the
// convolution / matmul / pointwise engines) and backend_attention.cpp (attention graphs).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <map>
#include <vector>

namespace tbdsim::dnn {

struct PlanTensor {
    int64_t uid = 0;
    bool is_virtual = false;
    bool by_value = false;  // a host scalar in the variant pack (scales, mask fill values)
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    std::vector<int64_t> dims;
    int64_t elements() const {
        int64_t n = dims.empty() ? 0 : 1;
        for (int64_t d : dims) n *= d;
        return n;
    }
    // Whether execution needs a device pointer for it in the variant pack.
    bool in_device_memory() const { return !is_virtual && !by_value; }
};

struct PlanOperation {
    cudnnBackendDescriptorType_t type{};
    // conv: x (dy for data), w (dy for filter); matmul: a, b; pointwise: x[, b[, t]]; reduction: x;
    // RNG: its seed and offset tensors, when given as tensors.
    std::vector<PlanTensor> inputs;
    PlanTensor output;
    int pointwise_mode = 0;
    double flops = 0;
};

// The kind of graph an engine runs.
enum class GraphKind {
    kMainWithEpilogue,   // one convolution or matmul, first, then pointwise epilogues; or pointwise alone
    kAttentionForward,   // scaled dot-product attention as the cudnn frontend builds it (2 matmuls)
    kAttentionBackward,  // its backward (recomputed scores, 5 matmuls)
};

struct PlanSnapshot {
    std::vector<PlanOperation> operations;
    GraphKind kind = GraphKind::kMainWithEpilogue;
    int64_t engine = 0;
    int64_t workspace_bytes = 0;
};

struct BackendDescriptor;
// A finalized tensor descriptor's uid, type, dims and flags; false when it is not one (backend_execute.cpp).
bool read_tensor(const BackendDescriptor* t, PlanTensor* out);

// backend_attention.cpp. cuDNN's own SDPA operations (CUDNN_BACKEND_OPERATION_SDPA_FWD/BWD_DESCRIPTOR,
// what the frontend builds when no mask or other graph piece asks for the composite form): inputs Q,
// K, V and the rest of the device tensors, output O (forward) or dQ (backward); false when incomplete.
bool read_sdpa_operation(const BackendDescriptor& op, PlanOperation* out);
// The graph's kind when it is attention (matmuls with softmax reductions
// between them); kMainWithEpilogue otherwise.
GraphKind attention_kind(const std::vector<PlanOperation>& operations);
int64_t attention_workspace_bytes(const PlanSnapshot& plan);
// One fused kernel for the whole graph; every device tensor's pointer must be in `by_uid`.
cudnnStatus_t execute_attention(cudnnHandle_t handle, const PlanSnapshot& plan, const std::map<int64_t, void*>& by_uid,
                                void* workspace);

}  // namespace tbdsim::dnn
