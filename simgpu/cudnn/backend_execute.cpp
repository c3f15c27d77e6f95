// Finalization, engine heuristics and execution of backend operation graphs. Supported graphs: one
// convolution (forward, backward data, backward filter) or matmul followed by pointwise operations
// (fused into its kernel as an epilogue), or pointwise operations alone (one kernel each). Two engines
// per graph: global index 0 runs on FMA units (FP32), index 1 on tensor cores (TF32 for FP32 data) and
// carries CUDNN_NUMERICAL_NOTE_TENSOR_CORE; the heuristic lists the tensor-core engine first on
// devices of compute capability 8.0 and newer. FLOPs: dnn_flops.h (the fused epilogue's are added to
// its kernel's). Attention graphs (matmuls with softmax reductions, or cuDNN's SDPA operations) are
// recognized at graph finalization and run by backend_attention.cpp.
#include <map>

#include <simgpu/not_modelled.h>

#include <cstdio>

#include "backend_plan.h"
#include "backend_store.h"
#include "dnn_state.h"

namespace tbdsim::dnn {

bool read_tensor(const BackendDescriptor* t, PlanTensor* out) {
    if (t == nullptr || t->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR || !t->finalized) return false;
    out->uid = t->scalar<int64_t>(CUDNN_ATTR_TENSOR_UNIQUE_ID);
    out->is_virtual = t->scalar<bool>(CUDNN_ATTR_TENSOR_IS_VIRTUAL, false);
    out->by_value = t->scalar<bool>(CUDNN_ATTR_TENSOR_IS_BY_VALUE, false);
    out->type = t->scalar<cudnnDataType_t>(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_DATA_FLOAT);
    out->dims = t->array<int64_t>(CUDNN_ATTR_TENSOR_DIMENSIONS);
    return !out->dims.empty();
}

namespace {

// The operation's tensors and FLOPs; false when a required attribute is missing.
bool read_operation(const BackendDescriptor& op, PlanOperation* out) {
    out->type = op.type;
    PlanTensor a, b, y;
    auto conv = [&](cudnnBackendAttributeName_t x_name, cudnnBackendAttributeName_t w_name,
                    cudnnBackendAttributeName_t y_name, cudnnBackendAttributeName_t conv_name, int pass) {
        if (!read_tensor(op.descriptor(x_name), &a) || !read_tensor(op.descriptor(w_name), &b) ||
            !read_tensor(op.descriptor(y_name), &y) || op.descriptor(conv_name) == nullptr) {
            return false;
        }
        // x [N, C, ...], w [K, C/g, ...], y [N, K, ...] in every pass (the names differ).
        const PlanTensor& x = pass == 1 ? y : a;                      // backward data: dx is the output
        const PlanTensor& w = pass == 2 ? y : b;                      // backward filter: dw is the output
        const PlanTensor& out_t = pass == 0 ? y : pass == 1 ? a : b;  // the convolution's output (y / dy)
        if (x.dims.size() != w.dims.size() || x.dims.size() != out_t.dims.size() || x.dims.size() < 3 ||
            w.dims[1] <= 0 || x.dims[1] % w.dims[1] != 0) {
            return false;
        }
        int64_t filter = 1, output = 1;
        for (size_t i = 2; i < x.dims.size(); ++i) {
            filter *= w.dims[i];
            output *= out_t.dims[i];
        }
        out->inputs = {a, b};
        out->output = y;
        out->flops = convolution_flops(x.dims[0], x.dims[1], w.dims[0], x.dims[1] / w.dims[1], filter, output);
        return true;
    };
    switch (op.type) {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
            return conv(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                        0);
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
            // inputs dy, w; output dx
            if (!conv(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                      CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                      1)) {
                return false;
            }
            return true;
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
            // inputs x, dy; output dw
            return conv(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                        CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, 2);
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
            if (!read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC), &a) ||
                !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC), &b) ||
                !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC), &y) ||
                op.descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC) == nullptr) {
                return false;
            }
            const size_t r = a.dims.size();
            if (r < 2 || b.dims.size() != r || y.dims.size() != r || a.dims[r - 1] != b.dims[r - 2] ||
                y.dims[r - 2] != a.dims[r - 2] || y.dims[r - 1] != b.dims[r - 1]) {
                return false;
            }
            int64_t batch = 1;
            for (size_t i = 0; i + 2 < r; ++i) batch *= y.dims[i];
            out->inputs = {a, b};
            out->output = y;
            out->flops = matmul_flops(batch, y.dims[r - 2], y.dims[r - 1], a.dims[r - 1]);
            return true;
        }
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: {
            const BackendDescriptor* pw =
                backend_descriptor(op.descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR));
            if (pw == nullptr || !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC), &a) ||
                !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC), &y)) {
                return false;
            }
            out->inputs = {a};
            if (read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC), &b)) out->inputs.push_back(b);
            // The condition of a binary select (attention masks).
            if (PlanTensor t; read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC), &t)) {
                out->inputs.push_back(t);
            }
            out->output = y;
            out->pointwise_mode = pw->scalar<int>(CUDNN_ATTR_POINTWISE_MODE);
            out->flops = pointwise_flops(out->pointwise_mode, y.elements());
            return true;
        }
        case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: {
            const BackendDescriptor* reduction = backend_descriptor(op.descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC));
            if (reduction == nullptr || !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC), &a) ||
                !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC), &y)) {
                return false;
            }
            out->inputs = {a};
            out->output = y;
            out->pointwise_mode = reduction->scalar<int>(CUDNN_ATTR_REDUCTION_OPERATOR);
            out->flops = static_cast<double>(a.elements());  // one operation per element reduced
            return true;
        }
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
            return read_sdpa_operation(op, out);
        case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:  // transposed views in attention backward graphs
            if (!read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_RESHAPE_XDESC), &a) ||
                !read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_RESHAPE_YDESC), &y) || a.elements() != y.elements()) {
                return false;
            }
            out->inputs = {a};
            out->output = y;
            return true;
        case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR: {
            // Dropout masks: the seed is an INT64 value or a tensor, the offset a tensor.
            if (!read_tensor(op.descriptor(CUDNN_ATTR_OPERATION_RNG_YDESC), &y)) return false;
            for (auto name : {CUDNN_ATTR_OPERATION_RNG_SEED, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC}) {
                const BackendDescriptor::Value* value = op.find(name);
                if (value != nullptr && value->type == CUDNN_TYPE_BACKEND_DESCRIPTOR &&
                    read_tensor(op.descriptor(name), &a)) {
                    out->inputs.push_back(a);
                }
            }
            out->output = y;
            return true;
        }
        default:
            return false;
    }
}

// Reductions, random numbers, reshapes and cuDNN's SDPA operations run only inside attention graphs.
bool attention_only(cudnnBackendDescriptorType_t type) {
    return type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR || type == CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR ||
           type == CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR || type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR ||
           type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR;
}

bool is_main(cudnnBackendDescriptorType_t type) {
    return type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && !attention_only(type);
}

bool executed_operation(cudnnBackendDescriptorType_t type) {
    switch (type) {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:  // in attention graphs
        case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
            return true;
        default:
            return false;
    }
}

// A graph with an operation no engine here executes (reductions, RNG, normalization, SDPA: what
// PyTorch's cuDNN attention builds) is named like an unmodelled function, so that tbdprof says so.
cudnnStatus_t unexecuted_operation(cudnnBackendDescriptorType_t type) {
    char name[96];
    std::snprintf(name, sizeof name, "cudnnBackendFinalize (a graph with operation descriptor type %d)",
                  static_cast<int>(type));
    tbdsim_not_modelled(name, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN");
    return fail(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN, "operation graph: an operation the simulated cuDNN does not run");
}

// Operations of a graph descriptor, checked against the supported patterns.
cudnnStatus_t read_graph(const BackendDescriptor& graph, std::vector<PlanOperation>* out, GraphKind* kind) {
    // A finalized graph answers from the operations it copied then: frontends (PyTorch's cudnn
    // frontend among them) destroy the operation descriptors once the graph is built.
    if (graph.finalized && graph.snapshot != nullptr) {
        *out = graph.snapshot->operations;
        *kind = graph.snapshot->kind;
        return CUDNN_STATUS_SUCCESS;
    }
    const auto ops = graph.array<void*>(CUDNN_ATTR_OPERATIONGRAPH_OPS);
    if (ops.empty()) return fail(CUDNN_STATUS_BAD_PARAM, "operation graph: no operations");
    for (void* pointer : ops) {
        const BackendDescriptor* op = backend_descriptor(pointer);
        if (op != nullptr && op->finalized && !executed_operation(op->type)) return unexecuted_operation(op->type);
        // Each operation copied its tensors and mode when finalized (its pointwise or matmul
        // descriptor may be gone by now).
        if (op == nullptr || !op->finalized || op->snapshot == nullptr || op->snapshot->operations.size() != 1) {
            return fail(CUDNN_STATUS_BAD_PARAM, "operation graph: an operation is not finalized or incomplete");
        }
        out->push_back(op->snapshot->operations.front());
    }
    *kind = attention_kind(*out);
    if (*kind != GraphKind::kMainWithEpilogue) return CUDNN_STATUS_SUCCESS;
    int mains = 0;
    for (size_t i = 0; i < out->size(); ++i) {
        const PlanOperation& operation = (*out)[i];
        if (attention_only(operation.type)) return unexecuted_operation(operation.type);
        if (is_main(operation.type) && (++mains > 1 || i > 0)) {
            return fail(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN,
                        "operation graph: one convolution or matmul, first, then pointwise epilogues");
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

int64_t engine_workspace(const std::vector<PlanOperation>& ops, int64_t engine) {
    if (engine != 1 || ops.empty() || !is_main(ops[0].type) ||
        ops[0].type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) {
        return 0;
    }
    const std::vector<int64_t>& w = ops[0].inputs[1].dims;  // the filter (or dy) drives the index table
    int64_t reduction = 1;
    for (size_t i = 1; i < w.size(); ++i) reduction *= w[i];
    return reduction * 8;
}

// What an engine (and the configs and plans built on it) runs: the graph's operations on engine `index`.
std::shared_ptr<const PlanSnapshot> engine_snapshot(const PlanSnapshot& graph, int64_t index) {
    auto snapshot = std::make_shared<PlanSnapshot>(graph);
    snapshot->engine = index;
    snapshot->workspace_bytes = graph.kind == GraphKind::kMainWithEpilogue
                                    ? engine_workspace(snapshot->operations, index)
                                    : attention_workspace_bytes(*snapshot);
    return snapshot;
}

bool has_all(const BackendDescriptor& d, std::initializer_list<cudnnBackendAttributeName_t> names) {
    for (auto name : names) {
        if (!d.has(name)) return false;
    }
    return true;
}

}  // namespace

cudnnStatus_t finalize_descriptor(BackendDescriptor& d) {
    bool complete = true;
    switch (d.type) {
        case CUDNN_BACKEND_TENSOR_DESCRIPTOR: {
            complete = has_all(d, {CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_ATTR_TENSOR_STRIDES,
                                   CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT});
            if (complete) {
                const auto dims = d.array<int64_t>(CUDNN_ATTR_TENSOR_DIMENSIONS);
                if (dims.size() != d.array<int64_t>(CUDNN_ATTR_TENSOR_STRIDES).size()) complete = false;
                for (int64_t x : dims) complete = complete && x > 0;
            }
            break;
        }
        case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
            complete = has_all(d, {CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                   CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_ATTR_CONVOLUTION_DILATIONS,
                                   CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                                   CUDNN_ATTR_CONVOLUTION_POST_PADDINGS});
            break;
        case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
            complete = d.has(CUDNN_ATTR_POINTWISE_MODE);
            break;
        case CUDNN_BACKEND_MATMUL_DESCRIPTOR:
            complete = d.has(CUDNN_ATTR_MATMUL_COMP_TYPE);
            break;
        case CUDNN_BACKEND_REDUCTION_DESCRIPTOR:
            complete = d.has(CUDNN_ATTR_REDUCTION_OPERATOR);
            break;
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: {
            auto copy = std::make_shared<PlanSnapshot>();
            copy->operations.resize(1);
            complete = read_operation(d, &copy->operations.front());
            if (complete) d.snapshot = std::move(copy);
            break;
        }
        case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: {
            if (!d.has(CUDNN_ATTR_OPERATIONGRAPH_HANDLE)) return fail(CUDNN_STATUS_BAD_PARAM, "graph: no handle");
            log_graph_if_asked(d);
            auto copy = std::make_shared<PlanSnapshot>();
            if (const cudnnStatus_t s = read_graph(d, &copy->operations, &copy->kind); s != CUDNN_STATUS_SUCCESS) {
                return s;
            }
            d.snapshot = std::move(copy);
            break;
        }
        case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        case CUDNN_BACKEND_ENGINE_DESCRIPTOR: {
            const auto graph_name = d.type == CUDNN_BACKEND_ENGINE_DESCRIPTOR ? CUDNN_ATTR_ENGINE_OPERATION_GRAPH
                                                                              : CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH;
            const BackendDescriptor* graph = backend_descriptor(d.descriptor(graph_name));
            complete = graph != nullptr && graph->finalized && graph->snapshot != nullptr;
            if (complete && d.type == CUDNN_BACKEND_ENGINE_DESCRIPTOR) {
                const int64_t index = d.scalar<int64_t>(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, -1);
                if (index != 0 && index != 1) return fail(CUDNN_STATUS_NOT_SUPPORTED, "engine: global index 0 or 1");
                d.snapshot = engine_snapshot(*graph->snapshot, index);
            }
            break;
        }
        case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
        case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
            const bool plan = d.type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
            // Each level copied what it needs when it was finalized (the graph its operations, the
            // engine those and its index): frontends destroy the lower descriptors early.
            const BackendDescriptor* config =
                plan ? backend_descriptor(d.descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG)) : &d;
            const BackendDescriptor* below =
                config == nullptr ? nullptr
                : plan            ? config
                                  : backend_descriptor(config->descriptor(CUDNN_ATTR_ENGINECFG_ENGINE));
            // No handle is required of a plan: cuDNN 9 deprecates CUDNN_ATTR_EXECUTION_PLAN_HANDLE (the
            // graph carries it) and its frontend no longer sets it; cudnnBackendExecute is given one.
            if (below == nullptr || !below->finalized || below->snapshot == nullptr) {
                return fail(CUDNN_STATUS_BAD_PARAM, "engine config / plan: engine config or engine missing");
            }
            d.snapshot = below->snapshot;
            d.workspace_bytes = d.snapshot->workspace_bytes;
            break;
        }
        case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
            complete = d.has(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) && d.has(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS) &&
                       d.find(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS)->count ==
                           d.find(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS)->count;
            break;
        default:
            break;  // knob choices and the like: nothing to check
    }
    if (!complete) return fail(CUDNN_STATUS_BAD_PARAM, "backend: required attributes missing or inconsistent");
    d.finalized = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t heuristic_results(BackendDescriptor& heuristic, int64_t requested, int64_t* returned, void** configs) {
    BackendDescriptor* graph = backend_descriptor(heuristic.descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH));
    if (graph == nullptr || graph->snapshot == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, "heuristic: graph destroyed");
    cudnnHandle_t handle = graph != nullptr ? graph->scalar<cudnnHandle_t>(CUDNN_ATTR_OPERATIONGRAPH_HANDLE) : nullptr;
    const bool tensor_cores_first = handle == nullptr || handle->compute_capability_major >= 8;
    const int64_t order[2] = {tensor_cores_first ? 1 : 0, tensor_cores_first ? 0 : 1};
    *returned = 0;
    // Asked for no configs (the frontends' way to count them first): how many there are.
    if (requested == 0) {
        *returned = 2;
        return CUDNN_STATUS_SUCCESS;
    }
    for (int64_t i = 0; i < 2 && i < requested; ++i) {
        BackendDescriptor* config = backend_descriptor(configs[i]);
        if (config == nullptr) return CUDNN_STATUS_BAD_PARAM;
        auto engine = std::make_shared<BackendDescriptor>();
        engine->type = CUDNN_BACKEND_ENGINE_DESCRIPTOR;
        void* graph_pointer = graph;
        engine->values[CUDNN_ATTR_ENGINE_OPERATION_GRAPH] = {CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                             std::vector<unsigned char>(sizeof(void*))};
        std::memcpy(engine->values[CUDNN_ATTR_ENGINE_OPERATION_GRAPH].bytes.data(), &graph_pointer, sizeof(void*));
        engine->values[CUDNN_ATTR_ENGINE_GLOBAL_INDEX] = {CUDNN_TYPE_INT64, 1, std::vector<unsigned char>(8)};
        std::memcpy(engine->values[CUDNN_ATTR_ENGINE_GLOBAL_INDEX].bytes.data(), &order[i], 8);
        engine->finalized = true;
        // The config refers to the engine through the registry, like any descriptor-typed value.
        void* engine_pointer = nullptr;
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine_pointer) != CUDNN_STATUS_SUCCESS) {
            return CUDNN_STATUS_INTERNAL_ERROR;
        }
        BackendDescriptor* registered = backend_descriptor(engine_pointer);
        registered->values = engine->values;
        registered->finalized = true;
        registered->snapshot = engine_snapshot(*graph->snapshot, order[i]);
        config->type = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
        config->values.clear();
        config->values[CUDNN_ATTR_ENGINECFG_ENGINE] = {CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                       std::vector<unsigned char>(sizeof(void*))};
        std::memcpy(config->values[CUDNN_ATTR_ENGINECFG_ENGINE].bytes.data(), &engine_pointer, sizeof(void*));
        config->owned.assign(1, std::shared_ptr<BackendDescriptor>(
                                    registered, [](BackendDescriptor* e) { cudnnBackendDestroyDescriptor(e); }));
        config->finalized = false;
        if (const cudnnStatus_t s = finalize_descriptor(*config); s != CUDNN_STATUS_SUCCESS) return s;
        ++*returned;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t execute_plan(cudnnHandle_t handle, const BackendDescriptor& plan, const BackendDescriptor& pack) {
    const PlanSnapshot* snapshot = plan.snapshot.get();
    if (snapshot == nullptr) return CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED;
    const auto uids = pack.array<int64_t>(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const auto pointers = pack.array<void*>(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    std::map<int64_t, void*> by_uid;
    for (size_t i = 0; i < uids.size() && i < pointers.size(); ++i) by_uid[uids[i]] = pointers[i];
    void* workspace = pack.scalar<void*>(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, nullptr);
    if (snapshot->workspace_bytes > 0 && workspace == nullptr) {
        return fail(CUDNN_STATUS_BAD_PARAM, "execute: the plan needs a workspace");
    }
    auto pointer_of = [&](const PlanTensor& t, void** out) {
        if (t.is_virtual) return true;
        auto it = by_uid.find(t.uid);
        if (it == by_uid.end() || it->second == nullptr) return false;
        *out = it->second;
        return true;
    };
    if (snapshot->kind != GraphKind::kMainWithEpilogue) return execute_attention(handle, *snapshot, by_uid, workspace);
    const auto& ops = snapshot->operations;
    for (size_t i = 0; i < ops.size(); ++i) {
        const PlanOperation& op = ops[i];
        Launch launch;
        void* in = nullptr;
        void* second = nullptr;
        void* out = nullptr;
        if (!pointer_of(op.inputs[0], &in) || (op.inputs.size() > 1 && !pointer_of(op.inputs[1], &second)) ||
            !pointer_of(op.output, &out)) {
            return fail(CUDNN_STATUS_BAD_PARAM, "execute: a tensor's unique id is not in the variant pack");
        }
        launch.flops = op.flops;
        const cudnnDataType_t type = op.inputs[0].type;
        const cudnnMathType_t math = snapshot->engine == 1 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
        launch.precision = is_main(op.type)
                               ? convolution_precision(handle, type, math)
                               : (type == CUDNN_DATA_DOUBLE ? TBDSIM_PRECISION_FP64 : TBDSIM_PRECISION_FP32);
        const bool tensor_cores =
            launch.precision != TBDSIM_PRECISION_FP32 && launch.precision != TBDSIM_PRECISION_FP64;
        int64_t rows = op.output.elements(), columns = 1;
        switch (op.type) {
            case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
                launch.kernel = tensor_cores ? kConvFwdTf32 : kConvFwdImplicit;
                columns = op.output.dims[1];
                rows = op.output.elements() / columns;
                break;
            case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
                launch.kernel = tensor_cores ? kConvBwdDataTf32 : kConvBwdData0;
                break;
            case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
                launch.kernel = tensor_cores ? kConvBwdFilterTf32 : kConvBwdFilter0;
                break;
            case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: {
                launch.kernel = tensor_cores ? kMatmulTf32 : kMatmulFp32;
                const size_t r = op.output.dims.size();
                rows = op.output.elements() / op.output.dims[r - 1];
                columns = op.output.dims[r - 1];
                break;
            }
            default:
                launch.kernel = kPointwise;
                break;
        }
        // Pointwise operations after the main one are its fused epilogue: their FLOPs join its kernel.
        size_t last = i;
        if (is_main(op.type)) {
            while (last + 1 < ops.size() && !is_main(ops[last + 1].type)) {
                launch.flops += ops[++last].flops;
                void* fused_out = nullptr;
                if (!pointer_of(ops[last].output, &fused_out)) {
                    return fail(CUDNN_STATUS_BAD_PARAM, "execute: a tensor's unique id is not in the variant pack");
                }
                if (fused_out != nullptr) out = fused_out;
            }
            launch.grid_x = static_cast<unsigned>(std::max<int64_t>(1, (rows + 127) / 128));
            launch.grid_y = static_cast<unsigned>(std::max<int64_t>(1, (columns + 127) / 128));
        } else {
            launch.grid_x = blocks_for(op.output.elements(), 256);
        }
        launch.params.x = in;
        launch.params.w = second;
        launch.params.y = out;
        launch.params.workspace = workspace;
        launch.params.workspace_bytes = static_cast<unsigned long long>(snapshot->workspace_bytes);
        launch.params.elements = op.output.elements();
        launch.params.alpha = 1;
        if (const cudnnStatus_t s = run(handle, launch); s != CUDNN_STATUS_SUCCESS) return s;
        i = last;
    }
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace tbdsim::dnn
