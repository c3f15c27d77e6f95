// Scaled dot-product attention graphs of the backend API, as the cudnn frontend builds them for
// PyTorch's F.scaled_dot_product_attention (seen with TBDSIM_CUDNN_BACKEND_LOG=1): forward,
// S = Q.K^T, a scale, masks (generated row / column indices compared, a binary select), the softmax
// as reductions (max, sum) and pointwise steps (sub, exp, log, add: the statistics, div), then P.V;
// backward, the scores recomputed from the statistics and the five matmuls. Real cuDNN runs such a
// graph as one fused flash-attention kernel, and so do we: its FLOPs are dnn_flops.h's
// attention_flops, its bytes each device tensor of the variant pack once, timed as a roofline.
#include <algorithm>
#include <iterator>
#include <map>

#include "backend_plan.h"
#include "backend_store.h"
#include "dnn_flops.h"
#include "dnn_state.h"

namespace tbdsim::dnn {
namespace {

bool is_16_bit_float(cudnnDataType_t type) {
    return type == CUDNN_DATA_HALF || type == CUDNN_DATA_BFLOAT16;
}

// The attention scores' shape from the first matmul, Q.K^T: [batch..., s_q, s_kv] with the head
// dimension as its reduction.
struct ScoreShape {
    int64_t batch_heads = 1, s_q = 0, s_kv = 0, head_dim = 0;
    int64_t elements() const { return batch_heads * s_q * s_kv; }
};

bool is_native(cudnnBackendDescriptorType_t type) {
    return type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR || type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR;
}

// The operation whose inputs are Q and K: the first matmul (Q.K^T), or cuDNN's own SDPA operation.
const PlanOperation* scores_operation(const std::vector<PlanOperation>& operations) {
    for (const PlanOperation& op : operations) {
        if (op.type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR || is_native(op.type)) return &op;
    }
    return nullptr;
}

ScoreShape score_shape(const PlanOperation& scores) {
    ScoreShape shape;
    if (is_native(scores.type)) {  // Q [b, h, s_q, d], K [b, h_k, s_kv, d]
        const std::vector<int64_t>& q = scores.inputs[0].dims;
        shape.batch_heads = q[0] * q[1];
        shape.s_q = q[2];
        shape.s_kv = scores.inputs[1].dims[2];
        shape.head_dim = q[3];
        return shape;
    }
    const std::vector<int64_t>& dims = scores.output.dims;
    const size_t r = dims.size();
    for (size_t i = 0; i + 2 < r; ++i) shape.batch_heads *= dims[i];
    shape.s_q = dims[r - 2];
    shape.s_kv = dims[r - 1];
    shape.head_dim = scores.inputs[0].dims.back();
    return shape;
}

// The matmuls' FLOPs: the composite graph's matmul operations, or what a native operation counted.
double matmul_flops_of(const std::vector<PlanOperation>& operations) {
    double total = 0;
    for (const PlanOperation& op : operations) {
        if (op.type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR || is_native(op.type)) total += op.flops;
    }
    return total;
}

// Every tensor execution reads or writes in device memory, once each, by unique id.
std::vector<PlanTensor> device_tensors(const std::vector<PlanOperation>& operations) {
    std::map<int64_t, PlanTensor> by_uid;
    for (const PlanOperation& op : operations) {
        for (const PlanTensor& t : op.inputs) {
            if (t.in_device_memory()) by_uid.emplace(t.uid, t);
        }
        if (op.output.in_device_memory()) by_uid.emplace(op.output.uid, op.output);
    }
    std::vector<PlanTensor> out;
    for (auto& [uid, tensor] : by_uid) out.push_back(tensor);
    return out;
}

}  // namespace

bool read_sdpa_operation(const BackendDescriptor& op, PlanOperation* out) {
    const bool forward = op.type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR;
    using Names = std::vector<cudnnBackendAttributeName_t>;
    // Required first (Q, K, V, then O / dQ), then whatever else is set and lives in device memory.
    const Names required = forward
                               ? Names{CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
                                       CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC}
                               : Names{CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC,   CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC,
                                       CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC,   CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC,
                                       CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC,   CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC,
                                       CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC,
                                       CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC};
    const Names optional =
        forward ? Names{CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC,        CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
                        CUDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC,  CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC,
                        CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC,
                        CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC}
                : Names{CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_QDESC,
                        CUDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KVDESC};
    std::vector<PlanTensor> tensors;
    for (auto name : required) {
        PlanTensor t;
        if (!read_tensor(op.descriptor(name), &t) || t.dims.size() != 4) return false;
        tensors.push_back(t);
    }
    const PlanTensor &q = tensors[0], &k = tensors[1], &v = tensors[2];
    if (k.dims[3] != q.dims[3] || v.dims[2] != k.dims[2] || k.dims[0] != q.dims[0]) return false;
    for (auto name : optional) {
        if (PlanTensor t; read_tensor(op.descriptor(name), &t)) tensors.push_back(t);
    }
    out->type = op.type;
    out->output = tensors[3];
    tensors.erase(tensors.begin() + 3);
    out->inputs = std::move(tensors);
    // Forward Q.K^T and P.V; backward the recomputed Q.K^T, dQ and dK (head dim d) and dV, dP (d_v).
    const double per_dim = 2.0 * static_cast<double>(q.dims[0] * q.dims[1] * q.dims[2] * k.dims[2]);
    const auto d = static_cast<double>(q.dims[3]), d_v = static_cast<double>(v.dims[3]);
    out->flops = per_dim * (forward ? d + d_v : 3 * d + 2 * d_v);
    return true;
}

GraphKind attention_kind(const std::vector<PlanOperation>& operations) {
    int matmuls = 0, exponentials = 0;
    for (const PlanOperation& op : operations) {
        switch (op.type) {
            case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
                ++matmuls;
                break;
            case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
                exponentials += op.pointwise_mode == CUDNN_POINTWISE_EXP ? 1 : 0;
                break;
            case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
            case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
            case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
                break;
            case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
            case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
                if (operations.size() != 1 || !is_16_bit_float(op.inputs[0].type)) return GraphKind::kMainWithEpilogue;
                return op.type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR ? GraphKind::kAttentionForward
                                                                              : GraphKind::kAttentionBackward;
            default:
                return GraphKind::kMainWithEpilogue;  // convolutions: not attention
        }
    }
    const PlanOperation* scores = scores_operation(operations);
    // cuDNN's attention takes FP16 / BF16 Q, K, V (FP8 aside); the scores are at least [s_q, s_kv].
    if (exponentials == 0 || scores == nullptr || scores->output.dims.size() < 2 ||
        !is_16_bit_float(scores->inputs[0].type)) {
        return GraphKind::kMainWithEpilogue;
    }
    if (matmuls == 2) return GraphKind::kAttentionForward;
    if (matmuls >= 4) return GraphKind::kAttentionBackward;
    return GraphKind::kMainWithEpilogue;
}

// The backward kernel accumulates dQ across the key / value blocks in FP32 (flash attention's
// scheme). The cudnn frontend's graph hands it that accumulator as a device FP32 matmul output (it
// places it in the workspace it sizes itself); a graph that does not gets it in the plan's
// workspace: batch x heads x s_q x head_dim floats. The forward pass needs none.
int64_t attention_workspace_bytes(const PlanSnapshot& plan) {
    if (plan.kind != GraphKind::kAttentionBackward) return 0;
    for (const PlanOperation& op : plan.operations) {
        if (op.type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR && op.output.in_device_memory() &&
            op.output.type == CUDNN_DATA_FLOAT) {
            return 0;
        }
    }
    const ScoreShape shape = score_shape(*scores_operation(plan.operations));
    return shape.batch_heads * shape.s_q * shape.head_dim * static_cast<int64_t>(sizeof(float));
}

cudnnStatus_t execute_attention(cudnnHandle_t handle, const PlanSnapshot& plan, const std::map<int64_t, void*>& by_uid,
                                void* workspace) {
    const PlanOperation& scores = *scores_operation(plan.operations);
    const ScoreShape shape = score_shape(scores);
    const bool backward = plan.kind == GraphKind::kAttentionBackward;
    Launch launch;
    launch.kernel = backward ? kSdpaBackward : kSdpaForward;
    launch.flops = attention_flops(matmul_flops_of(plan.operations), shape.elements(), backward);
    launch.precision = convolution_precision(handle, scores.inputs[0].type, CUDNN_TENSOR_OP_MATH);
    // Each device tensor crosses device memory once (the scores never leave the chip).
    std::vector<const void*> pointers;
    for (const PlanTensor& t : device_tensors(plan.operations)) {
        auto it = by_uid.find(t.uid);
        if (it == by_uid.end() || it->second == nullptr) {
            return fail(CUDNN_STATUS_BAD_PARAM, "execute: a tensor's unique id is not in the variant pack");
        }
        launch.bytes += static_cast<double>(t.elements()) * static_cast<double>(element_bytes(t.type));
        pointers.push_back(it->second);
    }
    // Q and K (the scores' operation's inputs) as x and w, the last operation's output (O; dQ) as y.
    auto pointer_of = [&](const PlanTensor& t) -> const void* {
        auto it = by_uid.find(t.uid);
        return t.in_device_memory() && it != by_uid.end() ? it->second : nullptr;
    };
    launch.params.x = pointer_of(scores.inputs[0]);
    launch.params.w = pointer_of(scores.inputs[1]);
    launch.params.y = const_cast<void*>(pointer_of(plan.operations.back().output));
    size_t extra = 0;
    for (const void* p : pointers) {
        if (p == launch.params.x || p == launch.params.w || p == launch.params.y) continue;
        if (extra < std::size(launch.params.operands)) launch.params.operands[extra++] = p;
    }
    launch.params.workspace = workspace;
    launch.params.workspace_bytes = static_cast<unsigned long long>(plan.workspace_bytes);
    launch.params.elements = shape.elements();
    launch.params.alpha = 1;
    // One block of 128 query (backward: key) rows per head and batch entry, three warp groups.
    const int64_t rows = backward ? shape.s_kv : shape.s_q;
    launch.grid_x = static_cast<unsigned>(std::max<int64_t>(1, (rows + 127) / 128));
    launch.grid_y = static_cast<unsigned>(std::max<int64_t>(1, shape.batch_heads));
    launch.threads = 384;
    return run(handle, launch);
}

}  // namespace tbdsim::dnn
