// Reading finalized cuDNN backend descriptors through the backend API's own getters (each
// descriptor-typed attribute into a temporary descriptor), into the summaries of
// cudnn_backend_summary.h. Called when the descriptors are finalized, never at execution.
#include "cudnn_backend_summary.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "cudnn_flops.h"

namespace tbdprof::preload::cudnn_backend {
namespace {

LibraryFunction<decltype(&cudnnBackendCreateDescriptor)> real_create{"cudnnBackendCreateDescriptor"};
LibraryFunction<decltype(&cudnnBackendDestroyDescriptor)> real_destroy{"cudnnBackendDestroyDescriptor"};
LibraryFunction<decltype(&cudnnBackendGetAttribute)> real_get{"cudnnBackendGetAttribute"};

// Temporary descriptors, destroyed with the reader.
class Reader {
public:
    Reader() : create_(real_create.get()), destroy_(real_destroy.get()), get_(real_get.get()) {}
    ~Reader() {
        for (cudnnBackendDescriptor_t d : made_) destroy_(d);
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    bool usable() const { return create_ != nullptr && destroy_ != nullptr && get_ != nullptr; }

    cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
        cudnnBackendDescriptor_t d = nullptr;
        if (create_(type, &d) != CUDNN_STATUS_SUCCESS) return nullptr;
        made_.push_back(d);
        return d;
    }
    // The descriptor-typed attribute `name` of `from`, read into a new descriptor of `type`.
    cudnnBackendDescriptor_t child(cudnnBackendDescriptor_t from, cudnnBackendAttributeName_t name,
                                   cudnnBackendDescriptorType_t type) {
        cudnnBackendDescriptor_t d = make(type);
        int64_t count = 0;
        if (d == nullptr || get_(from, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &d) != CUDNN_STATUS_SUCCESS ||
            count < 1) {
            return nullptr;
        }
        return d;
    }
    std::vector<cudnnBackendDescriptor_t> children(cudnnBackendDescriptor_t from, cudnnBackendAttributeName_t name,
                                                   cudnnBackendDescriptorType_t type) {
        int64_t count = 0;
        if (get_(from, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr) != CUDNN_STATUS_SUCCESS || count < 1 ||
            count > 64) {
            return {};
        }
        std::vector<cudnnBackendDescriptor_t> out;
        for (int64_t i = 0; i < count; ++i) out.push_back(make(type));
        int64_t got = 0;
        if (get_(from, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, out.data()) != CUDNN_STATUS_SUCCESS) return {};
        return out;
    }
    template <typename T>
    std::vector<T> values(cudnnBackendDescriptor_t from, cudnnBackendAttributeName_t name,
                          cudnnBackendAttributeType_t type, int64_t max) {
        std::vector<T> out(static_cast<size_t>(max));
        int64_t count = 0;
        if (get_(from, name, type, max, &count, out.data()) != CUDNN_STATUS_SUCCESS) return {};
        out.resize(static_cast<size_t>(std::clamp<int64_t>(count, 0, max)));
        return out;
    }

private:
    decltype(&cudnnBackendCreateDescriptor) create_;
    decltype(&cudnnBackendDestroyDescriptor) destroy_;
    decltype(&cudnnBackendGetAttribute) get_;
    std::vector<cudnnBackendDescriptor_t> made_;
};

bool read_tensor(Reader& r, cudnnBackendDescriptor_t op, cudnnBackendAttributeName_t name, Tensor* out) {
    cudnnBackendDescriptor_t t = r.child(op, name, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (t == nullptr) return false;
    out->dims = r.values<int64_t>(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 8);
    out->strides = r.values<int64_t>(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 8);
    const auto uid = r.values<int64_t>(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1);
    const auto type = r.values<cudnnDataType_t>(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1);
    // CUDNN_TYPE_BOOLEAN is one byte.
    const auto is_virtual = r.values<uint8_t>(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1);
    const auto by_value = r.values<uint8_t>(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1);
    if (out->dims.empty() || uid.empty()) return false;
    out->uid = uid[0];
    if (!type.empty()) out->type = type[0];
    out->is_virtual = !is_virtual.empty() && is_virtual[0] != 0;
    out->by_value = !by_value.empty() && by_value[0] != 0;
    return true;
}

// Reads every named tensor into `out`, in order; false when one is missing.
bool read_tensors(Reader& r, cudnnBackendDescriptor_t op, std::initializer_list<cudnnBackendAttributeName_t> names,
                  std::vector<Tensor>* out) {
    for (cudnnBackendAttributeName_t name : names) {
        Tensor t;
        if (!read_tensor(r, op, name, &t)) return false;
        out->push_back(std::move(t));
    }
    return true;
}

// x [N, C, ...], w [K, C/g, ...], y [N, K, ...] whatever the pass.
bool convolution(Operation& o, const Tensor& x, const Tensor& w, const Tensor& y) {
    if (x.dims.size() != w.dims.size() || x.dims.size() != y.dims.size() || x.dims.size() < 3 || w.dims[1] <= 0 ||
        x.dims[1] % w.dims[1] != 0) {
        return false;
    }
    int64_t filter = 1, output = 1;
    for (size_t i = 2; i < x.dims.size(); ++i) {
        filter *= w.dims[i];
        output *= y.dims[i];
    }
    const int64_t groups = x.dims[1] / w.dims[1];
    o.flops = cudnn_flops::convolution_flops(x.dims[0], x.dims[1], w.dims[0], groups, filter, output);
    o.m = x.dims[0] * output;
    o.n = w.dims[0] / groups;
    o.k = w.dims[1] * filter;
    o.batch = groups;
    o.main = true;
    return true;
}

// Convolution passes: `names` are the pass's two inputs and its output; `x`, `w`, `y` index them as
// the forward pass's tensors.
bool read_convolution(Reader& r, cudnnBackendDescriptor_t d, raw::LibraryOp op,
                      std::initializer_list<cudnnBackendAttributeName_t> names, int x, int w, int y, Operation* o) {
    std::vector<Tensor> t;
    if (!read_tensors(r, d, names, &t)) return false;
    o->op = op;
    o->inputs = {t[0], t[1]};
    o->output = t[2];
    return convolution(*o, t[x], t[w], t[y]);
}

bool read_matmul(Reader& r, cudnnBackendDescriptor_t d, Operation* o) {
    std::vector<Tensor> t;
    if (!read_tensors(
            r, d,
            {CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_ATTR_OPERATION_MATMUL_CDESC},
            &t)) {
        return false;
    }
    const Tensor &a = t[0], &y = t[2];
    const size_t rank = y.dims.size();
    if (rank < 2 || a.dims.size() != rank) return false;
    o->op = raw::LibraryOp::Matmul;
    o->inputs = {t[0], t[1]};
    o->output = y;
    o->m = y.dims[rank - 2];
    o->n = y.dims[rank - 1];
    o->k = a.dims[rank - 1];
    o->batch = 1;
    for (size_t i = 0; i + 2 < rank; ++i) o->batch *= y.dims[i];
    o->flops = cudnn_flops::matmul_flops(o->batch, o->m, o->n, o->k);
    o->main = true;
    return true;
}

bool read_pointwise(Reader& r, cudnnBackendDescriptor_t d, Operation* o) {
    Tensor a, b, y;
    if (!read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &a) ||
        !read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, &y)) {
        return false;
    }
    cudnnBackendDescriptor_t pw =
        r.child(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const auto mode = pw != nullptr
                          ? r.values<cudnnPointwiseMode_t>(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1)
                          : std::vector<cudnnPointwiseMode_t>{};
    if (mode.empty()) return false;
    o->op = raw::LibraryOp::Pointwise;
    o->inputs = {a};
    if (read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, &b)) o->inputs.push_back(b);
    if (Tensor t; read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, &t)) o->inputs.push_back(t);
    o->output = y;
    o->pointwise_mode = mode[0];
    o->m = y.elements();
    o->flops = cudnn_flops::pointwise_flops(mode[0], y.elements());
    return true;
}

// Reductions and reshapes: one input, one output.
bool read_unary(Reader& r, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t x, cudnnBackendAttributeName_t y,
                bool reduction, Operation* o) {
    std::vector<Tensor> t;
    if (!read_tensors(r, d, {x, y}, &t)) return false;
    o->inputs = {t[0]};
    o->output = t[1];
    o->m = t[1].elements();
    o->flops = reduction ? cudnn_flops::backend_reduction_flops(t[0].elements()) : 0;
    return true;
}

bool read_rng(Reader& r, cudnnBackendDescriptor_t d, Operation* o) {
    if (!read_tensor(r, d, CUDNN_ATTR_OPERATION_RNG_YDESC, &o->output)) return false;
    for (auto name : {CUDNN_ATTR_OPERATION_RNG_SEED, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC}) {
        if (Tensor t; read_tensor(r, d, name, &t)) o->inputs.push_back(t);  // the seed may be a value instead
    }
    o->m = o->output.elements();
    return true;
}

// cuDNN's own SDPA operations: inputs Q, K, V (then dO, O and the statistics backward), output O (dQ
// backward); Q [b, h, s_q, d], K [b, h_k, s_kv, d], V [b, h_k, s_kv, d_v]. FLOPs here are the
// matmuls' only: the softmax joins them in the plan's attention rule.
bool read_sdpa(Reader& r, cudnnBackendDescriptor_t d, bool forward, Operation* o) {
    std::vector<Tensor> t;
    const bool read = forward
                          ? read_tensors(r, d,
                                         {CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
                                          CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC},
                                         &t)
                          : read_tensors(r, d,
                                         {CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC,
                                          CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC,
                                          CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC,
                                          CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC},
                                         &t);
    if (!read || t[0].dims.size() != 4 || t[1].dims.size() != 4 || t[2].dims.size() != 4) return false;
    o->op = forward ? raw::LibraryOp::AttentionForward : raw::LibraryOp::AttentionBackward;
    o->output = t.back();
    t.pop_back();
    o->inputs = std::move(t);
    const std::vector<int64_t>&q = o->inputs[0].dims, &k = o->inputs[1].dims, &v = o->inputs[2].dims;
    o->batch = q[0] * q[1];
    o->m = q[2];
    o->n = k[2];
    o->k = q[3];
    o->flops = cudnn_flops::sdpa_matmul_flops(o->batch, o->m, o->n, q[3], v[3], !forward);
    o->main = true;
    return true;
}

}  // namespace

bool read_operation(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t d, Operation* o) {
    Reader r;
    if (!r.usable()) return false;
    o->type = type;
    switch (type) {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
            return read_convolution(
                r, d, raw::LibraryOp::ConvolutionForward,
                {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y},
                0, 1, 2, o);
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:  // dy, w -> dx
            return read_convolution(
                r, d, raw::LibraryOp::ConvolutionBackwardData,
                {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX},
                2, 1, 0, o);
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:  // x, dy -> dw
            return read_convolution(
                r, d, raw::LibraryOp::ConvolutionBackwardFilter,
                {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                 CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW},
                0, 2, 1, o);
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
            return read_matmul(r, d, o);
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
            return read_pointwise(r, d, o);
        case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
            return read_unary(r, d, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, true,
                              o);
        case CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR:
            return read_unary(r, d, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, false, o);
        case CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR:
            return read_rng(r, d, o);
        case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
            return read_sdpa(r, d, type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, o);
        default:
            return false;
    }
}

namespace {

// A copy read back through a getter does not say its type: the operation types tried in turn.
bool read_any_operation(cudnnBackendDescriptor_t d, Operation* o) {
    for (cudnnBackendDescriptorType_t type :
         {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
          CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
          CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
          CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR}) {
        *o = Operation{};
        if (read_operation(type, d, o)) return true;
    }
    return false;
}

}  // namespace

Operations read_graph(cudnnBackendDescriptor_t graph) {
    Reader r;
    if (!r.usable() || graph == nullptr) return {};
    Operations out;
    for (cudnnBackendDescriptor_t d :
         r.children(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)) {
        Operation o;
        if (!read_any_operation(d, &o)) return {};  // an unknown operation: FLOPs unknown
        out.push_back(std::move(o));
    }
    return out;
}

Operations read_plan_graph(cudnnBackendDescriptor_t plan) {
    Reader r;
    if (!r.usable()) return {};
    cudnnBackendDescriptor_t config =
        r.child(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cudnnBackendDescriptor_t engine =
        config != nullptr ? r.child(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR) : nullptr;
    cudnnBackendDescriptor_t graph =
        engine != nullptr ? r.child(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
                          : nullptr;
    return read_graph(graph);
}

void read_plan_facts(cudnnBackendDescriptor_t plan, PlanSummary* out) {
    Reader r;
    if (!r.usable()) return;
    const auto workspace = r.values<int64_t>(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1);
    out->workspace_bytes = workspace.empty() ? 0 : workspace[0];
    cudnnBackendDescriptor_t config =
        r.child(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cudnnBackendDescriptor_t engine =
        config != nullptr ? r.child(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR) : nullptr;
    if (engine == nullptr) return;
    for (auto note : r.values<cudnnBackendNumericalNote_t>(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                                           CUDNN_TYPE_NUMERICAL_NOTE, 16)) {
        out->tensor_core = out->tensor_core || note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    }
}

}  // namespace tbdprof::preload::cudnn_backend

namespace tbdprof::preload::cudnn_backend {
namespace {

bool is_16_bit_float(cudnnDataType_t type) {
    return type == CUDNN_DATA_HALF || type == CUDNN_DATA_BFLOAT16;
}

// The attention pass of a composite graph (see finish_summary), or Pointwise when it is none.
raw::LibraryOp composite_attention(const Operations& operations) {
    int matmuls = 0, exponentials = 0;
    const Operation* scores = nullptr;  // the first matmul, Q.K^T
    for (const Operation& o : operations) {
        if (o.type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) {
            if (scores == nullptr) scores = &o;
            ++matmuls;
        }
        if (o.type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && o.pointwise_mode == CUDNN_POINTWISE_EXP)
            ++exponentials;
        if (o.main && o.type != CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) return raw::LibraryOp::Pointwise;
    }
    if (exponentials == 0 || scores == nullptr || !is_16_bit_float(scores->inputs[0].type))
        return raw::LibraryOp::Pointwise;
    if (matmuls == 2) return raw::LibraryOp::AttentionForward;
    if (matmuls >= 4) return raw::LibraryOp::AttentionBackward;
    return raw::LibraryOp::Pointwise;
}

}  // namespace

void finish_summary(PlanSummary* s) {
    const Operations& ops = s->operations;
    if (ops.empty()) return;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].main) {
            s->main = i;
            break;
        }
    }
    const Operation& main = ops[s->main];
    s->op = main.op;
    const bool native = main.type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR ||
                        main.type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR;
    if (native && ops.size() == 1 && is_16_bit_float(main.inputs[0].type)) {
        s->flops = cudnn_flops::attention_flops(main.flops, main.batch * main.m * main.n,
                                                main.op == raw::LibraryOp::AttentionBackward);
        return;
    }
    if (const raw::LibraryOp attention = composite_attention(ops); attention != raw::LibraryOp::Pointwise) {
        s->op = attention;
        double matmul_flops = 0;
        for (const Operation& o : ops) matmul_flops += o.main ? o.flops : 0;
        s->flops = cudnn_flops::attention_flops(matmul_flops, main.output.elements(),
                                                attention == raw::LibraryOp::AttentionBackward);
        return;
    }
    s->flops = 0;
    for (const Operation& o : ops) s->flops += o.flops;
}

}  // namespace tbdprof::preload::cudnn_backend
