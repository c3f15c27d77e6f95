#include "cnn_backend.h"

#include <cstdio>
#include <cstdlib>

#include "cnn_cudnn.h"
#include "common/check.h"

namespace tbdsample {
namespace {

void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
         const void* values) {
    CUDNN_CHECK(cudnnBackendSetAttribute(d, name, type, count, values));
}

void set_descriptor(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t value) {
    set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
}

}  // namespace

BackendPlan::BackendPlan(cudnnHandle_t handle, bool tensor_cores) : handle_(handle), tensor_cores_(tensor_cores) {}

BackendPlan::~BackendPlan() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
}

cudnnBackendDescriptor_t BackendPlan::make(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d));
    owned_.push_back(d);
    return d;
}

cudnnBackendDescriptor_t BackendPlan::tensor_descriptor(int64_t uid) const {
    for (const auto& [id, d] : tensors_) {
        if (id == uid) return d;
    }
    std::fprintf(stderr, "%s: unknown tensor id %lld\n", program_name(), static_cast<long long>(uid));
    std::exit(1);
}

int64_t BackendPlan::tensor(const std::vector<int64_t>& dims, bool is_virtual) {
    cudnnBackendDescriptor_t d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    std::vector<int64_t> strides(dims.size());
    int64_t stride = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= dims[i];
    }
    const int64_t uid = next_uid_++, alignment = 16;
    const cudnnDataType_t type = CUDNN_DATA_FLOAT;
    const bool virtual_flag = is_virtual;
    set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data());
    set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data());
    set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virtual_flag);
    CUDNN_CHECK(cudnnBackendFinalize(d));
    tensors_.emplace_back(uid, d);
    return uid;
}

void BackendPlan::convolution(Pass pass, int64_t in, int64_t second, int64_t out, float beta) {
    cudnnBackendDescriptor_t conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t spatial = 2, ones[] = {1, 1};
    set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
    set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones);
    set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, ones);
    set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, ones);
    set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, ones);
    CUDNN_CHECK(cudnnBackendFinalize(conv));
    struct Names {
        cudnnBackendDescriptorType_t type;
        cudnnBackendAttributeName_t in, second, out, conv, alpha, beta;
    };
    const Names names = pass == Pass::forward ? Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                                      CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA}
                        : pass == Pass::backward_data
                            ? Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA}
                            : Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                                    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    cudnnBackendDescriptor_t op = make(names.type);
    set_descriptor(op, names.in, tensor_descriptor(in));
    set_descriptor(op, names.second, tensor_descriptor(second));
    set_descriptor(op, names.out, tensor_descriptor(out));
    set_descriptor(op, names.conv, conv);
    const float alpha = 1;
    set(op, names.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    set(op, names.beta, CUDNN_TYPE_FLOAT, 1, &beta);
    CUDNN_CHECK(cudnnBackendFinalize(op));
    operations_.push_back(op);
}

void BackendPlan::matmul(int64_t a, int64_t b, int64_t c) {
    cudnnBackendDescriptor_t desc = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    set(desc, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    CUDNN_CHECK(cudnnBackendFinalize(desc));
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set_descriptor(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, tensor_descriptor(a));
    set_descriptor(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, tensor_descriptor(b));
    set_descriptor(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, tensor_descriptor(c));
    set_descriptor(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, desc);
    CUDNN_CHECK(cudnnBackendFinalize(op));
    operations_.push_back(op);
}

void BackendPlan::pointwise(cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t y) {
    cudnnBackendDescriptor_t desc = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    set(desc, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(desc, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
    CUDNN_CHECK(cudnnBackendFinalize(desc));
    cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set_descriptor(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc);
    set_descriptor(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, tensor_descriptor(x));
    if (b >= 0) set_descriptor(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, tensor_descriptor(b));
    set_descriptor(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, tensor_descriptor(y));
    CUDNN_CHECK(cudnnBackendFinalize(op));
    operations_.push_back(op);
}

void BackendPlan::finalize() {
    cudnnBackendDescriptor_t graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(operations_.size()),
        operations_.data());
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_);
    CUDNN_CHECK(cudnnBackendFinalize(graph));
    cudnnBackendDescriptor_t heuristic = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set_descriptor(heuristic, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    set(heuristic, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CUDNN_CHECK(cudnnBackendFinalize(heuristic));
    constexpr int kCandidates = 8;
    cudnnBackendDescriptor_t configs[kCandidates];
    for (auto& c : configs) c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t returned = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                         kCandidates, &returned, configs));
    // The first engine whose notes match: tensor cores (TF32) only when asked for, as frameworks
    // filter engines by CUDNN_NUMERICAL_NOTE_TENSOR_CORE when TF32 is disallowed.
    cudnnBackendDescriptor_t chosen = nullptr;
    for (int64_t i = 0; i < returned && chosen == nullptr; ++i) {
        cudnnBackendDescriptor_t engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t count = 0;
        CUDNN_CHECK(cudnnBackendGetAttribute(configs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                             &count, &engine));
        cudnnBackendNumericalNote_t notes[8];
        CUDNN_CHECK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 8,
                                             &count, notes));
        bool tensor_core = false;
        for (int64_t n = 0; n < count && n < 8; ++n)
            tensor_core = tensor_core || notes[n] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        if (tensor_core == tensor_cores_) chosen = configs[i];
    }
    if (chosen == nullptr) {
        std::fprintf(stderr, "%s: cuDNN offers no engine for the graph\n", program_name());
        std::exit(1);
    }
    plan_ = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan_, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_);
    set_descriptor(plan_, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, chosen);
    CUDNN_CHECK(cudnnBackendFinalize(plan_));
    int64_t count = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(plan_, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                         &workspace_bytes_));
}

void BackendPlan::execute(DeviceAllocator& allocator, const std::vector<std::pair<int64_t, void*>>& pointers) const {
    std::vector<int64_t> uids;
    std::vector<void*> data;
    for (const auto& [uid, pointer] : pointers) {
        uids.push_back(uid);
        data.push_back(pointer);
    }
    void* workspace = workspace_bytes_ > 0
                          ? allocator.allocate(static_cast<std::size_t>(workspace_bytes_), Category::workspace)
                          : nullptr;
    cudnnBackendDescriptor_t pack = nullptr;
    CUDNN_CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data());
    set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(data.size()),
        data.data());
    set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    CUDNN_CHECK(cudnnBackendFinalize(pack));
    CUDNN_CHECK(cudnnBackendExecute(handle_, plan_, pack));
    CUDNN_CHECK(cudnnBackendDestroyDescriptor(pack));
    if (workspace != nullptr) allocator.release(workspace);
}

}  // namespace tbdsample
