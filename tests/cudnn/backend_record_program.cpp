// Backend graphs built and executed as PyTorch's cudnn frontend does it: every descriptor but the
// execution plan (tensors, operations, graph, heuristic, engine configs) is destroyed before
// cudnnBackendExecute, which the backend API allows. Run under the collector by backend_record.sh,
// which checks what the trace records for each execution against the simulator's truth and against
// the lines printed here: "call OP A B C" with the operand pointers passed for the main operation's
// inputs (a, b) and the graph's output (c), in execution order.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace {

using Desc = cudnnBackendDescriptor_t;

void check(cudnnStatus_t status, const char* what) {
    if (status == CUDNN_STATUS_SUCCESS) return;
    std::fprintf(stderr, "backend_record_program: %s failed (%d)\n", what, static_cast<int>(status));
    std::exit(1);
}

// One graph's descriptors, all destroyed by release() but the plan; device memory per tensor.
class Graph {
public:
    explicit Graph(cudnnHandle_t handle) : handle_(handle) {}
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    ~Graph() {
        release();
        if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
        for (auto& [uid, p] : memory_) cudaFree(p);
    }
    Desc create(cudnnBackendDescriptorType_t type) {
        Desc d = nullptr;
        check(cudnnBackendCreateDescriptor(type, &d), "create");
        made_.push_back(d);
        return d;
    }
    static void set(Desc d, cudnnBackendAttributeName_t name, Desc value) {
        check(cudnnBackendSetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value), "set descriptor");
    }
    static void set(Desc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                    const void* values) {
        check(cudnnBackendSetAttribute(d, name, type, count, values), "set");
    }
    // Packed tensors; device ones get memory (by-value ones are host scalars).
    Desc tensor(int64_t uid, std::vector<int64_t> dims, cudnnDataType_t type, bool is_virtual, bool by_value = false) {
        std::vector<int64_t> strides(dims.size(), 1);
        for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
        Desc t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        const int64_t alignment = 16;
        set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, int64_t(dims.size()), dims.data());
        set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, int64_t(strides.size()), strides.data());
        set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
        set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
        set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
        set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
        if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
        check(cudnnBackendFinalize(t), "tensor");
        if (by_value) {
            memory_[uid] = nullptr;
        } else if (!is_virtual) {
            int64_t bytes = type == CUDNN_DATA_FLOAT ? 4 : 2;
            for (int64_t d : dims) bytes *= d;
            void* p = nullptr;
            if (cudaMalloc(&p, size_t(bytes)) != cudaSuccess) check(CUDNN_STATUS_ALLOC_FAILED, "cudaMalloc");
            memory_[uid] = p;
        }
        return t;
    }
    void* pointer(int64_t uid) const { return memory_.at(uid); }
    void operation(Desc op) {
        check(cudnnBackendFinalize(op), "operation");
        operations_.push_back(op);
    }
    void pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc y) {
        Desc pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        const cudnnDataType_t math = CUDNN_DATA_FLOAT;
        set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
        set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math);
        check(cudnnBackendFinalize(pw), "pointwise descriptor");
        Desc op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
        if (b != nullptr) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
        operation(op);
    }
    void matmul(Desc a, Desc b, Desc c) {
        Desc mm = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
        const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
        set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
        check(cudnnBackendFinalize(mm), "matmul descriptor");
        Desc op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
        operation(op);
    }
    void reduction(cudnnReduceTensorOp_t mode, Desc x, Desc y) {
        Desc r = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
        set(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
        check(cudnnBackendFinalize(r), "reduction descriptor");
        Desc op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
        operation(op);
    }
    // Graph, heuristic, its first engine config, the plan; then every other descriptor destroyed.
    void build() {
        Desc graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(operations_.size()),
            operations_.data());
        set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_);
        check(cudnnBackendFinalize(graph), "graph");
        Desc heuristic = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
        set(heuristic, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
        set(heuristic, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
        check(cudnnBackendFinalize(heuristic), "heuristic");
        Desc config = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        int64_t count = 0;
        check(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                       &count, &config),
              "heuristic results");
        check(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan_), "plan");
        set(plan_, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
        check(cudnnBackendFinalize(plan_), "plan");
        check(cudnnBackendGetAttribute(plan_, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                       &workspace_bytes_),
              "workspace size");
        release();
    }
    void execute(const char* op, int64_t a, int64_t b, int64_t c) {
        static float host_scalar = 0.125f;
        std::vector<int64_t> uids;
        std::vector<void*> pointers;
        for (auto& [uid, p] : memory_) {
            uids.push_back(uid);
            pointers.push_back(p != nullptr ? p : &host_scalar);
        }
        void* workspace = nullptr;
        if (workspace_bytes_ > 0 && cudaMalloc(&workspace, size_t(workspace_bytes_)) != cudaSuccess)
            check(CUDNN_STATUS_ALLOC_FAILED, "workspace");
        Desc pack = nullptr;
        check(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack), "pack");
        set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()), uids.data());
        set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(pointers.size()),
            pointers.data());
        set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
        check(cudnnBackendFinalize(pack), "pack");
        check(cudnnBackendExecute(handle_, plan_, pack), op);
        check(cudnnBackendDestroyDescriptor(pack), "destroy pack");
        if (cudaDeviceSynchronize() != cudaSuccess) check(CUDNN_STATUS_EXECUTION_FAILED, "synchronize");
        if (workspace != nullptr) cudaFree(workspace);
        std::printf("call %s %llu %llu %llu\n", op, static_cast<unsigned long long>(uintptr_t(pointer(a))),
                    static_cast<unsigned long long>(uintptr_t(pointer(b))),
                    static_cast<unsigned long long>(uintptr_t(pointer(c))));
    }

private:
    void release() {
        for (auto it = made_.rbegin(); it != made_.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
        made_.clear();
        operations_.clear();
    }
    cudnnHandle_t handle_;
    Desc plan_ = nullptr;
    int64_t workspace_bytes_ = 0;
    std::vector<Desc> made_;
    std::vector<Desc> operations_;
    std::map<int64_t, void*> memory_;
};

Desc convolution_descriptor(Graph& g) {
    Desc conv = g.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t spatial = 2, ones[] = {1, 1};
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones);
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, ones);
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, ones);
    Graph::set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, ones);
    check(cudnnBackendFinalize(conv), "convolution descriptor");
    return conv;
}

// A convolution pass (x [2, 4, 8, 8], w [8, 4, 3, 3], y [2, 8, 8, 8], padding 1), forward with a
// bias add fused: uids x 1, w 2, y 3, bias 4, y + bias 5.
void convolution(cudnnHandle_t handle, bool forward) {
    Graph g(handle);
    const float alpha = 1, beta = 0;
    Desc conv = convolution_descriptor(g);
    Desc x = g.tensor(1, {2, 4, 8, 8}, CUDNN_DATA_FLOAT, false), w = g.tensor(2, {8, 4, 3, 3}, CUDNN_DATA_FLOAT, false);
    Desc y = g.tensor(3, {2, 8, 8, 8}, CUDNN_DATA_FLOAT, forward);
    Desc op = g.create(forward ? CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR
                               : CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
    if (forward) {
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    } else {
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
        Graph::set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    }
    g.operation(op);
    if (forward) {
        Desc bias = g.tensor(4, {1, 8, 1, 1}, CUDNN_DATA_FLOAT, false);
        g.pointwise(CUDNN_POINTWISE_ADD, y, bias, g.tensor(5, {2, 8, 8, 8}, CUDNN_DATA_FLOAT, false));
    }
    g.build();
    if (forward) {
        g.execute("convolution_forward", 1, 2, 5);
    } else {
        g.execute("convolution_backward_data", 3, 2, 1);
    }
}

// Attention forward as matmuls around a softmax (BF16 Q, K^T, V, O: uids 1-4; the scale by value, 5):
// b 2, h 4, s_q 64, s_kv 96, d 32.
void composite_attention(cudnnHandle_t handle) {
    Graph g(handle);
    const int64_t b = 2, h = 4, s_q = 64, s_kv = 96, d = 32;
    const std::vector<int64_t> scores{b, h, s_q, s_kv}, rows{b, h, s_q, 1};
    Desc q = g.tensor(1, {b, h, s_q, d}, CUDNN_DATA_BFLOAT16, false);
    Desc k_t = g.tensor(2, {b, h, d, s_kv}, CUDNN_DATA_BFLOAT16, false);
    Desc v = g.tensor(3, {b, h, s_kv, d}, CUDNN_DATA_BFLOAT16, false);
    Desc o = g.tensor(4, {b, h, s_q, d}, CUDNN_DATA_BFLOAT16, false);
    Desc scale = g.tensor(5, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
    Desc raw = g.tensor(10, scores, CUDNN_DATA_FLOAT, true), scaled = g.tensor(11, scores, CUDNN_DATA_FLOAT, true);
    Desc max = g.tensor(12, rows, CUDNN_DATA_FLOAT, true), centred = g.tensor(13, scores, CUDNN_DATA_FLOAT, true);
    Desc e = g.tensor(14, scores, CUDNN_DATA_FLOAT, true), sum = g.tensor(15, rows, CUDNN_DATA_FLOAT, true);
    Desc p = g.tensor(16, scores, CUDNN_DATA_BFLOAT16, true);
    g.matmul(q, k_t, raw);
    g.pointwise(CUDNN_POINTWISE_MUL, raw, scale, scaled);
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, scaled, max);
    g.pointwise(CUDNN_POINTWISE_SUB, scaled, max, centred);
    g.pointwise(CUDNN_POINTWISE_EXP, centred, nullptr, e);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    g.pointwise(CUDNN_POINTWISE_DIV, e, sum, p);
    g.matmul(p, v, o);
    g.build();
    g.execute("attention_forward", 1, 2, 4);
}

// cuDNN's own SDPA operation (BF16; b 2, h 4, s_q 128, s_kv 80, d 64, d_v 32): Q, K, V, O uids 1-4,
// statistics 6, scale 5 by value; backward dO 7, dQ, dK, dV 8-10.
void native_attention(cudnnHandle_t handle, bool backward) {
    Graph g(handle);
    const int64_t b = 2, h = 4, s_q = 128, s_kv = 80, d = 64, d_v = 32;
    const cudnnDataType_t bf16 = CUDNN_DATA_BFLOAT16;
    Desc q = g.tensor(1, {b, h, s_q, d}, bf16, false), k = g.tensor(2, {b, h, s_kv, d}, bf16, false);
    Desc v = g.tensor(3, {b, h, s_kv, d_v}, bf16, false), o = g.tensor(4, {b, h, s_q, d_v}, bf16, false);
    Desc scale = g.tensor(5, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
    Desc stats = g.tensor(6, {b, h, s_q, 1}, CUDNN_DATA_FLOAT, false);
    Desc op =
        g.create(backward ? CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR : CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    if (!backward) {
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, stats);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale);
    } else {
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, q);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, k);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, v);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, o);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, stats);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, scale);
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, g.tensor(7, {b, h, s_q, d_v}, bf16, false));
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, g.tensor(8, {b, h, s_q, d}, bf16, false));
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, g.tensor(9, {b, h, s_kv, d}, bf16, false));
        Graph::set(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, g.tensor(10, {b, h, s_kv, d_v}, bf16, false));
    }
    g.operation(op);
    g.build();
    if (backward) {
        g.execute("attention_backward", 1, 2, 8);
    } else {
        g.execute("attention_forward", 1, 2, 4);
    }
}

}  // namespace

int main() {
    cudnnHandle_t handle = nullptr;
    check(cudnnCreate(&handle), "cudnnCreate");
    convolution(handle, true);
    convolution(handle, false);
    composite_attention(handle);
    native_attention(handle, false);
    native_attention(handle, true);
    cudnnDestroy(handle);
    return 0;
}
