// cudnnBackendExecute as a library call. The plan's operation graph is read back through the
// backend API's own getters (plan -> engine config -> engine -> operation graph -> operations ->
// tensors, each into a temporary descriptor), then recorded like the legacy calls
// (preload/cudnn_hooks.cpp): the main operation (convolution or matmul; pointwise otherwise) gives
// op and shape, FLOPs add every operation's by the collector's rules (cudnn_flops.h), the
// compute type is TF32 when the engine carries CUDNN_NUMERICAL_NOTE_TENSOR_CORE and the data is
// FP32, and the operands are the first operation's inputs (a, b) and the last one's output (c),
// found by unique id in the variant pack, whose workspace is the call's; each operand's byte extent
// comes from its tensor's dimensions, strides and data type. What cannot be read back
// (real cuDNN wants each temporary created with the type it receives) leaves FLOPs 0.
#include <cudnn.h>

#include <map>
#include <vector>

#include "cudnn_flops.h"
#include "library_call.h"
#include "operand_extent.h"

namespace tbdprof::preload {
namespace {


LibraryFunction<decltype(&cudnnBackendCreateDescriptor)> real_create{"cudnnBackendCreateDescriptor"};
LibraryFunction<decltype(&cudnnBackendDestroyDescriptor)> real_destroy{"cudnnBackendDestroyDescriptor"};
LibraryFunction<decltype(&cudnnBackendGetAttribute)> real_get{"cudnnBackendGetAttribute"};
LibraryFunction<decltype(&cudnnGetStream)> real_get_stream{"cudnnGetStream"};

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
        out.resize(static_cast<size_t>(std::min(count, max)));
        return out;
    }

private:
    decltype(&cudnnBackendCreateDescriptor) create_;
    decltype(&cudnnBackendDestroyDescriptor) destroy_;
    decltype(&cudnnBackendGetAttribute) get_;
    std::vector<cudnnBackendDescriptor_t> made_;
};

struct Tensor {
    int64_t uid = 0;
    bool is_virtual = false;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;  // as many as dims when read; otherwise the extent is unknown
    int64_t elements() const {
        int64_t n = dims.empty() ? 0 : 1;
        for (int64_t d : dims) n *= d;
        return n;
    }
};

bool read_tensor(Reader& r, cudnnBackendDescriptor_t op, cudnnBackendAttributeName_t name, Tensor* out) {
    cudnnBackendDescriptor_t t = r.child(op, name, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (t == nullptr) return false;
    out->dims = r.values<int64_t>(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 8);
    out->strides = r.values<int64_t>(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 8);
    const auto uid = r.values<int64_t>(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1);
    const auto type = r.values<cudnnDataType_t>(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1);
    const auto is_virtual =
        r.values<uint8_t>(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1);  // bool is one byte
    if (out->dims.empty() || uid.empty()) return false;
    out->uid = uid[0];
    if (!type.empty()) out->type = type[0];
    out->is_virtual = !is_virtual.empty() && is_virtual[0] != 0;
    return true;
}

struct Operation {
    raw::LibraryOp op = raw::LibraryOp::Pointwise;
    bool main = false;
    std::vector<Tensor> inputs;
    Tensor output;
    double flops = 0;
    int64_t m = 0, n = 0, k = 0, batch = 1;
};

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

bool read_operation(Reader& r, cudnnBackendDescriptor_t d, Operation* o) {
    Tensor a, b, y;
    if (read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, &a) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, &b) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, &y)) {
        o->op = raw::LibraryOp::ConvolutionForward;
        o->inputs = {a, b};
        o->output = y;
        return convolution(*o, a, b, y);
    }
    if (read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, &a) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, &b) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, &y)) {
        o->op = raw::LibraryOp::ConvolutionBackwardData;
        o->inputs = {a, b};
        o->output = y;
        return convolution(*o, y, b, a);
    }
    if (read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, &a) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, &b) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, &y)) {
        o->op = raw::LibraryOp::ConvolutionBackwardFilter;
        o->inputs = {a, b};
        o->output = y;
        return convolution(*o, a, y, b);
    }
    if (read_tensor(r, d, CUDNN_ATTR_OPERATION_MATMUL_ADESC, &a) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_MATMUL_BDESC, &b) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_MATMUL_CDESC, &y)) {
        const size_t rank = y.dims.size();
        if (rank < 2 || a.dims.size() != rank) return false;
        o->op = raw::LibraryOp::Matmul;
        o->inputs = {a, b};
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
    if (read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &a) &&
        read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, &y)) {
        cudnnBackendDescriptor_t pw =
            r.child(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        const auto mode =
            pw != nullptr ? r.values<cudnnPointwiseMode_t>(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1)
                          : std::vector<cudnnPointwiseMode_t>{};
        if (mode.empty()) return false;
        o->op = raw::LibraryOp::Pointwise;
        o->inputs = {a};
        if (read_tensor(r, d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, &b)) o->inputs.push_back(b);
        o->output = y;
        o->m = y.elements();
        o->flops = cudnn_flops::pointwise_flops(mode[0], y.elements());
        return true;
    }
    return false;
}

uint8_t cuda_type_of(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_FLOAT:
            return CUDA_R_32F;
        case CUDNN_DATA_DOUBLE:
            return CUDA_R_64F;
        case CUDNN_DATA_HALF:
            return CUDA_R_16F;
        case CUDNN_DATA_BFLOAT16:
            return CUDA_R_16BF;
        default:
            return 0xff;
    }
}

int64_t element_bytes(cudnnDataType_t type) {
    switch (type) {
        case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
        case CUDNN_DATA_INT8: return 1;
        default: return 0;
    }
}

// The bytes a tensor spans from its pointer, from its dimensions and strides (0 unknown).
uint64_t extent_bytes(const Tensor& t) {
    if (t.strides.size() != t.dims.size()) return 0;
    return strided_extent_bytes(static_cast<int>(t.dims.size()), t.dims.data(), t.strides.data(),
                                element_bytes(t.type));
}

void describe(raw::RawLibraryCall& record, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack) {
    Reader r;
    if (!r.usable()) return;
    const auto uids = r.values<int64_t>(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 64);
    const auto pointers = r.values<void*>(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 64);
    const auto workspace = r.values<void*>(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1);
    const auto workspace_bytes = r.values<int64_t>(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1);
    if (!workspace.empty() && workspace[0] != nullptr) {
        record.workspace = reinterpret_cast<uint64_t>(workspace[0]);
        record.workspace_bytes = workspace_bytes.empty() ? 0 : static_cast<uint64_t>(workspace_bytes[0]);
    }
    std::map<int64_t, void*> by_uid;
    for (size_t i = 0; i < uids.size() && i < pointers.size(); ++i) by_uid[uids[i]] = pointers[i];
    auto address = [&](const Tensor& t) {
        auto it = by_uid.find(t.uid);
        return t.is_virtual || it == by_uid.end() ? uint64_t{0} : reinterpret_cast<uint64_t>(it->second);
    };

    cudnnBackendDescriptor_t config =
        r.child(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    cudnnBackendDescriptor_t engine =
        config != nullptr ? r.child(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR) : nullptr;
    cudnnBackendDescriptor_t graph =
        engine != nullptr ? r.child(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)
                          : nullptr;
    if (graph == nullptr) return;
    bool tensor_core = false;
    for (auto note : r.values<cudnnBackendNumericalNote_t>(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                                           CUDNN_TYPE_NUMERICAL_NOTE, 16)) {
        tensor_core = tensor_core || note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    }
    std::vector<Operation> operations;
    for (cudnnBackendDescriptor_t d :
         r.children(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)) {
        Operation o;
        if (!read_operation(r, d, &o)) return;  // unknown operation: FLOPs unknown
        operations.push_back(std::move(o));
    }
    if (operations.empty()) return;
    const Operation* main = &operations.front();
    for (const Operation& o : operations) {
        if (o.main) main = &o;
    }
    record.op = main->op;
    record.m = main->m;
    record.n = main->n;
    record.k = main->k;
    record.batch = main->batch;
    const cudnnDataType_t type = main->inputs[0].type;
    record.a_type = record.b_type = record.c_type = cuda_type_of(type);
    record.compute_type = type == CUDNN_DATA_DOUBLE                               ? CUBLAS_COMPUTE_64F
                          : type == CUDNN_DATA_FLOAT && main->main && tensor_core ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                                  : CUBLAS_COMPUTE_32F;
    record.a = address(operations.front().inputs[0]);
    if (record.a != 0) record.a_bytes = extent_bytes(operations.front().inputs[0]);
    if (operations.front().inputs.size() > 1) record.b = address(operations.front().inputs[1]);
    if (record.b != 0) record.b_bytes = extent_bytes(operations.front().inputs[1]);
    record.c = address(operations.back().output);
    if (record.c != 0) record.c_bytes = extent_bytes(operations.back().output);
    double flops = 0;
    for (const Operation& o : operations) flops += o.flops;
    record.flops = flops;
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
    return record_library_call(call, [&](ThreadState& ts, tbdprof::raw::RawLibraryCall& record) {
        record.name_string = tbdprof::collector::intern_string(ts, "cudnnBackendExecute");
        record.op = tbdprof::raw::LibraryOp::Pointwise;
        record.batch = 1;
        cudaStream_t stream = nullptr;
        if (auto get_stream = real_get_stream.get(); get_stream != nullptr && handle != nullptr) {
            get_stream(handle, &stream);
        }
        record.stream = reinterpret_cast<uint64_t>(stream);
        describe(record, plan, pack);
    });
}
