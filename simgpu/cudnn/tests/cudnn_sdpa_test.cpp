// Scaled dot-product attention through the simulated cuDNN's backend API, with the graphs PyTorch's
// cudnn frontend builds for F.scaled_dot_product_attention (causal, BF16 / FP16; operation by
// operation as TBDSIM_CUDNN_BACKEND_LOG=1 printed them): the graphs finalize, the heuristic offers
// engines, plans report their workspace, execution checks the variant pack, and the simulator's
// truth (TBDSIM_TRUTH, set here before the first CUDA call) holds one fused kernel per pass with the
// FLOPs docs/simgpu-cudnn.md gives, timed as a roofline on the H100 model.
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

#define EXPECT(condition)                                                    \
    do {                                                                     \
        if (!(condition)) {                                                  \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition); \
            ++g_failures;                                                    \
        }                                                                    \
    } while (0)
#define EXPECT_STATUS(call, status) EXPECT((call) == (status))

using Desc = cudnnBackendDescriptor_t;

// Builds one graph's descriptors and remembers them for destruction; device tensors get memory.
struct GraphBuilder {
    explicit GraphBuilder(cudnnHandle_t h) : handle(h) {}
    GraphBuilder(const GraphBuilder&) = delete;
    GraphBuilder& operator=(const GraphBuilder&) = delete;
    cudnnHandle_t handle;
    std::vector<Desc> made;
    std::vector<Desc> operations;
    std::map<int64_t, int64_t> device_bytes;  // uid -> bytes of the tensors execution reads or writes

    ~GraphBuilder() {
        for (Desc d : made) cudnnBackendDestroyDescriptor(d);
    }
    Desc create(cudnnBackendDescriptorType_t type) {
        Desc d = nullptr;
        EXPECT_STATUS(cudnnBackendCreateDescriptor(type, &d), CUDNN_STATUS_SUCCESS);
        made.push_back(d);
        return d;
    }
    static void set(Desc d, cudnnBackendAttributeName_t name, Desc value) {
        EXPECT_STATUS(cudnnBackendSetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value),
                      CUDNN_STATUS_SUCCESS);
    }
    // dims with strides (row-major when none are given); virtual: never in memory; by value: a host scalar.
    Desc tensor(int64_t uid, std::vector<int64_t> dims, cudnnDataType_t type, bool is_virtual,
                std::vector<int64_t> strides = {}, bool by_value = false) {
        if (strides.empty()) {
            strides.assign(dims.size(), 1);
            for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
        }
        Desc t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        const int64_t alignment = 16;
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, int64_t(dims.size()), dims.data());
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, int64_t(strides.size()),
                                 strides.data());
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
        cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
        if (by_value) cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
        EXPECT_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_SUCCESS);
        if (!is_virtual && !by_value) {
            int64_t elements = 1;
            for (int64_t x : dims) elements *= x;
            device_bytes[uid] = elements * (type == CUDNN_DATA_FLOAT ? 4 : 2);
        }
        return t;
    }
    Desc scalar(int64_t uid) { return tensor(uid, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, {1, 1, 1, 1}, true); }
    // The cudnn frontend destroys each pointwise / matmul / reduction descriptor once its operation is
    // finalized; so do we, so that the graph must not need them.
    void pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc y, Desc condition = nullptr) {
        Desc pw = nullptr;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw);
        const cudnnDataType_t math = CUDNN_DATA_FLOAT;
        cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
        cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math);
        EXPECT_STATUS(cudnnBackendFinalize(pw), CUDNN_STATUS_SUCCESS);
        Desc op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
        if (b != nullptr) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
        set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
        if (condition != nullptr) set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, condition);
        finish(op, pw);
    }
    void matmul(Desc a, Desc b, Desc c) {
        Desc mm = nullptr;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm);
        const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
        cudnnBackendSetAttribute(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
        EXPECT_STATUS(cudnnBackendFinalize(mm), CUDNN_STATUS_SUCCESS);
        Desc op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
        set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
        finish(op, mm);
    }
    void reduction(cudnnReduceTensorOp_t mode, Desc x, Desc y) {
        Desc r = nullptr;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &r);
        cudnnBackendSetAttribute(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
        EXPECT_STATUS(cudnnBackendFinalize(r), CUDNN_STATUS_SUCCESS);
        Desc op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
        set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
        finish(op, r);
    }
    void reshape(Desc x, Desc y) {
        Desc op = create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
        set(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x);
        set(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
        finish(op, nullptr);
    }
    void finish(Desc op, Desc helper) {
        EXPECT_STATUS(cudnnBackendFinalize(op), CUDNN_STATUS_SUCCESS);
        if (helper != nullptr) cudnnBackendDestroyDescriptor(helper);
        operations.push_back(op);
    }
    cudnnStatus_t finalize_graph(Desc* graph) {
        *graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 int64_t(operations.size()), operations.data());
        cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
        return cudnnBackendFinalize(*graph);
    }
};

struct Shape {
    int64_t b = 4, h = 8, s_q = 1024, s_kv = 1024, d = 64;
};

// The causal mask as the frontend builds it: row and column indices, row >= column, else -inf.
Desc causal_mask(GraphBuilder& g, Desc scores, const Shape& s, int64_t first_uid, Desc fill) {
    const std::vector<int64_t> dims{s.b, s.h, s.s_q, s.s_kv};
    Desc row = g.tensor(first_uid, dims, CUDNN_DATA_INT32, true),
         col = g.tensor(first_uid + 1, dims, CUDNN_DATA_INT32, true);
    Desc keep = g.tensor(first_uid + 2, dims, CUDNN_DATA_BOOLEAN, true);
    Desc masked = g.tensor(first_uid + 3, dims, CUDNN_DATA_FLOAT, true);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, nullptr, row);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, nullptr, col);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, keep);
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, fill, masked, keep);
    return masked;
}

// Forward, 14 operations: Q.K^T, scale, mask, softmax with its statistics (uid 8), P.V.
void build_forward(GraphBuilder& g, const Shape& s, cudnnDataType_t type) {
    const std::vector<int64_t> qo{s.b, s.h, s.s_q, s.d}, kv{s.b, s.h, s.s_kv, s.d}, scores{s.b, s.h, s.s_q, s.s_kv},
        rows{s.b, s.h, s.s_q, 1};
    Desc q = g.tensor(0, qo, type, false);
    Desc k_t = g.tensor(1, {s.b, s.h, s.d, s.s_kv}, type, false, {s.h * s.s_kv * s.d, s.s_kv * s.d, 1, s.d});
    Desc v = g.tensor(2, kv, type, false), o = g.tensor(3, qo, type, false);
    Desc raw = g.tensor(4, scores, CUDNN_DATA_FLOAT, true), scaled = g.tensor(6, scores, CUDNN_DATA_FLOAT, true);
    g.matmul(q, k_t, raw);
    g.pointwise(CUDNN_POINTWISE_MUL, raw, g.scalar(5), scaled);
    Desc masked = causal_mask(g, scaled, s, 20, g.scalar(7));
    Desc max = g.tensor(14, rows, CUDNN_DATA_FLOAT, true), centred = g.tensor(15, scores, CUDNN_DATA_FLOAT, true);
    Desc e = g.tensor(16, scores, CUDNN_DATA_FLOAT, true), sum = g.tensor(17, rows, CUDNN_DATA_FLOAT, true);
    Desc log_sum = g.tensor(18, rows, CUDNN_DATA_FLOAT, true), stats = g.tensor(8, rows, CUDNN_DATA_FLOAT, false);
    Desc p = g.tensor(13, scores, type, true);
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, masked, max);
    g.pointwise(CUDNN_POINTWISE_SUB, masked, max, centred);
    g.pointwise(CUDNN_POINTWISE_EXP, centred, nullptr, e);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, log_sum);
    g.pointwise(CUDNN_POINTWISE_ADD, max, log_sum, stats);
    g.pointwise(CUDNN_POINTWISE_DIV, e, sum, p);
    g.matmul(p, v, o);
}

// Backward, 22 operations with the FP32 dQ accumulator the frontend provides (uid 30), 21 without.
void build_backward(GraphBuilder& g, const Shape& s, cudnnDataType_t type, bool dq_accumulator) {
    const std::vector<int64_t> qo{s.b, s.h, s.s_q, s.d}, kv{s.b, s.h, s.s_kv, s.d}, scores{s.b, s.h, s.s_q, s.s_kv},
        rows{s.b, s.h, s.s_q, 1};
    const std::vector<int64_t> transposed{s.h * s.s_kv * s.d, s.s_kv * s.d, 1, s.d};
    const std::vector<int64_t> scores_t{s.h * s.s_q * s.s_kv, s.s_q * s.s_kv, 1, s.s_kv};
    Desc q = g.tensor(0, qo, type, false), k_t = g.tensor(1, {s.b, s.h, s.d, s.s_kv}, type, false, transposed);
    Desc v_t = g.tensor(2, {s.b, s.h, s.d, s.s_kv}, type, false, transposed), o = g.tensor(3, qo, type, false);
    Desc d_o = g.tensor(9, qo, type, false), stats = g.tensor(8, rows, CUDNN_DATA_FLOAT, false);
    Desc dq = g.tensor(10, qo, type, false), dk = g.tensor(11, kv, type, false), dv = g.tensor(12, kv, type, false);
    Desc product = g.tensor(40, qo, CUDNN_DATA_FLOAT, true), row_sum = g.tensor(41, rows, CUDNN_DATA_FLOAT, true);
    Desc softmax_sum = g.tensor(13, rows, CUDNN_DATA_FLOAT, false);
    g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, product);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, product, row_sum);
    g.pointwise(CUDNN_POINTWISE_MUL, row_sum, g.scalar(7), softmax_sum);
    Desc raw = g.tensor(14, scores, CUDNN_DATA_FLOAT, true), scaled = g.tensor(15, scores, CUDNN_DATA_FLOAT, true);
    Desc centred = g.tensor(16, scores, CUDNN_DATA_FLOAT, true), p = g.tensor(22, scores, CUDNN_DATA_FLOAT, true);
    Desc scale = g.scalar(5);
    g.matmul(q, k_t, raw);
    g.pointwise(CUDNN_POINTWISE_MUL, raw, scale, scaled);
    g.pointwise(CUDNN_POINTWISE_SUB, scaled, stats, centred);
    Desc masked = causal_mask(g, centred, s, 50, g.scalar(17));
    g.pointwise(CUDNN_POINTWISE_EXP, masked, nullptr, p);
    Desc p_t = g.tensor(23, scores, type, true, scores_t);
    g.reshape(p, p_t);
    g.matmul(p_t, d_o, dv);
    Desc dp = g.tensor(24, scores, CUDNN_DATA_FLOAT, true), dp_centred = g.tensor(25, scores, CUDNN_DATA_FLOAT, true);
    Desc ds_raw = g.tensor(26, scores, CUDNN_DATA_FLOAT, true), ds = g.tensor(27, scores, CUDNN_DATA_FLOAT, true);
    g.matmul(d_o, v_t, dp);
    g.pointwise(CUDNN_POINTWISE_SUB, dp, softmax_sum, dp_centred);
    g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, p, ds_raw);
    g.pointwise(CUDNN_POINTWISE_MUL, ds_raw, scale, ds);
    Desc ds_t = g.tensor(28, scores, type, true, scores_t);
    g.reshape(ds, ds_t);
    g.matmul(ds_t, q, dk);
    Desc k = g.tensor(29, kv, CUDNN_DATA_FLOAT, true);
    g.reshape(k_t, k);
    if (!dq_accumulator) {
        g.matmul(ds, k, dq);
        return;
    }
    Desc dq_float = g.tensor(30, qo, CUDNN_DATA_FLOAT, false);
    g.matmul(ds, k, dq_float);
    g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_float, nullptr, dq);
}

// cuDNN's own SDPA operation, as the frontend builds it for unmasked attention: one operation with Q,
// K, V, O (uids 0-3), the statistics (8) and the scale (5, by value); backward adds dO (9) and dQ,
// dK, dV (10-12).
void build_native(GraphBuilder& g, const Shape& s, cudnnDataType_t type, bool backward) {
    const std::vector<int64_t> qo{s.b, s.h, s.s_q, s.d}, kv{s.b, s.h, s.s_kv, s.d}, rows{s.b, s.h, s.s_q, 1};
    Desc q = g.tensor(0, qo, type, false), k = g.tensor(1, kv, type, false), v = g.tensor(2, kv, type, false);
    Desc o = g.tensor(3, qo, type, false), stats = g.tensor(8, rows, CUDNN_DATA_FLOAT, false), scale = g.scalar(5);
    Desc op =
        g.create(backward ? CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR : CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    if (!backward) {
        for (auto [name, t] : {std::pair{CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q},
                               {CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k},
                               {CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v},
                               {CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o},
                               {CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, stats},
                               {CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale}}) {
            GraphBuilder::set(op, name, t);
        }
    } else {
        Desc d_o = g.tensor(9, qo, type, false), dq = g.tensor(10, qo, type, false);
        Desc dk = g.tensor(11, kv, type, false), dv = g.tensor(12, kv, type, false);
        for (auto [name, t] : {std::pair{CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, q},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, k},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, v},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, o},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, stats},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, scale},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, d_o},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, dq},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, dk},
                               {CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, dv}}) {
            GraphBuilder::set(op, name, t);
        }
    }
    g.finish(op, nullptr);
}

// Heuristic -> first engine config -> plan, as the frontend does; the plan's workspace size.
Desc make_plan(GraphBuilder& g, Desc graph, int64_t* workspace_bytes) {
    Desc heuristic = g.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    GraphBuilder::set(heuristic, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    cudnnBackendSetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    EXPECT_STATUS(cudnnBackendFinalize(heuristic), CUDNN_STATUS_SUCCESS);
    int64_t count = 0;
    EXPECT_STATUS(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                           &count, nullptr),
                  CUDNN_STATUS_SUCCESS);
    EXPECT(count >= 1);
    Desc config = g.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    EXPECT_STATUS(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                           &count, &config),
                  CUDNN_STATUS_SUCCESS);
    // Every engine offered for attention runs on tensor cores and says so.
    Desc configs[2] = {g.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), g.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)};
    EXPECT_STATUS(cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2,
                                           &count, configs),
                  CUDNN_STATUS_SUCCESS);
    for (int64_t i = 0; i < count && i < 2; ++i) {
        Desc engine = g.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t n = 0;
        cudnnBackendNumericalNote_t note = CUDNN_NUMERICAL_NOTE_TYPE_COUNT;
        EXPECT_STATUS(cudnnBackendGetAttribute(configs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                               1, &n, &engine),
                      CUDNN_STATUS_SUCCESS);
        EXPECT_STATUS(
            cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 1, &n, &note),
            CUDNN_STATUS_SUCCESS);
        EXPECT(n == 1 && note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
    }
    Desc plan = g.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    GraphBuilder::set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
    EXPECT_STATUS(cudnnBackendFinalize(plan), CUDNN_STATUS_SUCCESS);
    *workspace_bytes = -1;
    EXPECT_STATUS(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                           workspace_bytes),
                  CUDNN_STATUS_SUCCESS);
    return plan;
}

// Device memory for every device tensor, host scalars for the by-value ones; `skip_uid` left out.
cudnnStatus_t execute(GraphBuilder& g, Desc plan, void* workspace, int64_t skip_uid = -1) {
    static float host_scalar = 0.125f;
    std::vector<int64_t> uids;
    std::vector<void*> pointers;
    for (auto [uid, bytes] : g.device_bytes) {
        if (uid == skip_uid) continue;
        void* p = nullptr;
        EXPECT(cudaMalloc(&p, size_t(bytes)) == cudaSuccess);
        uids.push_back(uid);
        pointers.push_back(p);
    }
    for (int64_t uid : {5, 7, 17}) {
        uids.push_back(uid);
        pointers.push_back(&host_scalar);
    }
    Desc pack = g.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()),
                             uids.data());
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(pointers.size()),
                             pointers.data());
    if (workspace != nullptr)
        cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    EXPECT_STATUS(cudnnBackendFinalize(pack), CUDNN_STATUS_SUCCESS);
    const cudnnStatus_t status = cudnnBackendExecute(g.handle, plan, pack);
    for (void* p : pointers) {
        if (p != &host_scalar) cudaFree(p);
    }
    return status;
}

int64_t device_total(const GraphBuilder& g) {
    int64_t total = 0;
    for (auto [uid, bytes] : g.device_bytes) total += bytes;
    return total;
}

struct TruthKernel {
    double flops = 0;
    uint64_t duration_ns = 0;
    int precision = 0;
    std::string grid;
};

std::vector<TruthKernel> sdpa_kernels(const std::string& path, const std::string& pass) {
    std::vector<TruthKernel> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream fields(line);
        for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
        if (f.size() < 12 || f[0] != "kernel" || f[11].find("_sdpa_sm90_flash_" + pass + "_") == std::string::npos)
            continue;
        out.push_back({std::stod(f[6]), std::stoull(f[5]) - std::stoull(f[4]), std::stoi(f[10]), f[7]});
    }
    return out;
}

// The H100 model's roofline: BF16/FP16 tensor-core peak 989.4 TFLOP/s, 3.35 TB/s (gpu_catalog).
bool roofline_duration(const TruthKernel& k, double bytes) {
    const double expected_ns = std::max(k.flops / 989.4e12, bytes / 3.35e12) * 1e9;
    const bool ok = std::fabs(double(k.duration_ns) - expected_ns) <= 0.005 * expected_ns + 1;
    if (!ok)
        std::printf("duration %llu ns, roofline %.0f ns\n", static_cast<unsigned long long>(k.duration_ns),
                    expected_ns);
    return ok;
}

}  // namespace

int main() {
    char truth[] = "/tmp/tbdsim-sdpa-truth-XXXXXX";
    const int fd = mkstemp(truth);
    if (fd < 0) return 1;
    close(fd);
    setenv("TBDSIM_TRUTH", truth, 1);
    cudnnHandle_t handle = nullptr;
    if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS) {
        std::printf("FAIL: cudnnCreate\n");
        return 1;
    }
    const Shape s;  // 4 x 8 heads, 1024 x 1024, head dim 64
    const double score = double(s.b * s.h * s.s_q * s.s_kv);
    const double matmul = 2.0 * double(s.b * s.h * s.s_q * s.s_kv * s.d);  // each of Q.K^T, P.V, dV, dP, dK, dQ
    double forward_bytes = 0, backward_bytes = 0;
    {  // Forward, BF16: no workspace; a missing tensor is refused.
        GraphBuilder g(handle);
        build_forward(g, s, CUDNN_DATA_BFLOAT16);
        Desc graph = nullptr;
        EXPECT_STATUS(g.finalize_graph(&graph), CUDNN_STATUS_SUCCESS);
        int64_t workspace = -1;
        Desc plan = make_plan(g, graph, &workspace);
        EXPECT(workspace == 0);
        EXPECT_STATUS(execute(g, plan, nullptr, /*skip the statistics*/ 8), CUDNN_STATUS_BAD_PARAM);
        EXPECT_STATUS(execute(g, plan, nullptr), CUDNN_STATUS_SUCCESS);
        forward_bytes = double(device_total(g));
    }
    {  // Backward with the frontend's FP32 dQ accumulator: no workspace of its own.
        GraphBuilder g(handle);
        build_backward(g, s, CUDNN_DATA_BFLOAT16, true);
        Desc graph = nullptr;
        EXPECT_STATUS(g.finalize_graph(&graph), CUDNN_STATUS_SUCCESS);
        int64_t workspace = -1;
        Desc plan = make_plan(g, graph, &workspace);
        EXPECT(workspace == 0);
        EXPECT_STATUS(execute(g, plan, nullptr), CUDNN_STATUS_SUCCESS);
        backward_bytes = double(device_total(g));
    }
    {  // Backward without it: the engine accumulates dQ in its workspace, which execution needs.
        GraphBuilder g(handle);
        build_backward(g, s, CUDNN_DATA_HALF, false);
        Desc graph = nullptr;
        EXPECT_STATUS(g.finalize_graph(&graph), CUDNN_STATUS_SUCCESS);
        int64_t workspace = -1;
        Desc plan = make_plan(g, graph, &workspace);
        EXPECT(workspace == s.b * s.h * s.s_q * s.d * 4);
        EXPECT_STATUS(execute(g, plan, nullptr), CUDNN_STATUS_BAD_PARAM);
        void* buffer = nullptr;
        EXPECT(cudaMalloc(&buffer, size_t(workspace)) == cudaSuccess);
        EXPECT_STATUS(execute(g, plan, buffer), CUDNN_STATUS_SUCCESS);
        cudaFree(buffer);
    }
    const Shape decode{4, 8, 1, 1024, 64};  // one query row: bandwidth-bound
    double decode_bytes = 0;
    {
        GraphBuilder g(handle);
        build_forward(g, decode, CUDNN_DATA_HALF);
        Desc graph = nullptr;
        EXPECT_STATUS(g.finalize_graph(&graph), CUDNN_STATUS_SUCCESS);
        int64_t workspace = -1;
        EXPECT_STATUS(execute(g, make_plan(g, graph, &workspace), nullptr), CUDNN_STATUS_SUCCESS);
        decode_bytes = double(device_total(g));
    }
    {  // cuDNN's own SDPA operations: the same kernels and FLOPs; backward accumulates dQ in the workspace.
        GraphBuilder forward_graph(handle), backward_graph(handle);
        build_native(forward_graph, s, CUDNN_DATA_BFLOAT16, false);
        build_native(backward_graph, s, CUDNN_DATA_BFLOAT16, true);
        Desc graph = nullptr;
        int64_t workspace = -1;
        EXPECT_STATUS(forward_graph.finalize_graph(&graph), CUDNN_STATUS_SUCCESS);
        Desc plan = make_plan(forward_graph, graph, &workspace);
        EXPECT(workspace == 0);
        EXPECT_STATUS(execute(forward_graph, plan, nullptr), CUDNN_STATUS_SUCCESS);
        EXPECT_STATUS(backward_graph.finalize_graph(&graph), CUDNN_STATUS_SUCCESS);
        plan = make_plan(backward_graph, graph, &workspace);
        EXPECT(workspace == s.b * s.h * s.s_q * s.d * 4);
        void* buffer = nullptr;
        EXPECT(cudaMalloc(&buffer, size_t(workspace)) == cudaSuccess);
        EXPECT_STATUS(execute(backward_graph, plan, buffer, /*skip dO*/ 9), CUDNN_STATUS_BAD_PARAM);
        EXPECT_STATUS(execute(backward_graph, plan, buffer), CUDNN_STATUS_SUCCESS);
        cudaFree(buffer);
    }
    {  // FP32 attention is not something cuDNN runs: the reductions make it an unsupported pattern.
        GraphBuilder g(handle);
        build_forward(g, s, CUDNN_DATA_FLOAT);
        Desc graph = nullptr;
        EXPECT_STATUS(g.finalize_graph(&graph), CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN);
    }
    EXPECT(cudaDeviceSynchronize() == cudaSuccess);
    cudnnDestroy(handle);

    const auto forward = sdpa_kernels(truth, "fprop"), backward = sdpa_kernels(truth, "bprop");
    EXPECT(forward.size() == 3 && backward.size() == 3);
    if (forward.size() == 3 && backward.size() == 3) {
        EXPECT(forward[2].flops == forward[0].flops && forward[2].precision == 4);  // native, same sizes
        EXPECT(backward[2].flops == backward[0].flops && backward[2].precision == 4);
        EXPECT(forward[0].flops == 2 * matmul + 4 * score);                // 8,724,152,320
        EXPECT(forward[0].precision == 4 && forward[0].grid == "8,32,1");  // BF16; 1024 / 128 query blocks x 32 heads
        EXPECT(roofline_duration(forward[0], forward_bytes));
        EXPECT(backward[0].flops == 5 * matmul + 8 * score);  // 21,743,271,936
        EXPECT(backward[0].precision == 4 && roofline_duration(backward[0], backward_bytes));
        EXPECT(backward[1].flops == backward[0].flops && backward[1].precision == 3);  // FP16
        const double decode_score = double(decode.b * decode.h * decode.s_kv);
        EXPECT(forward[1].flops == 4.0 * decode_score * double(decode.d) + 4 * decode_score &&
               forward[1].precision == 3);
        EXPECT(roofline_duration(forward[1], decode_bytes) && forward[1].duration_ns > 2000);
    }
    std::remove(truth);
    if (g_failures == 0) std::printf("cudnn sdpa: all checks passed\n");
    return g_failures == 0 ? 0 : 1;
}
