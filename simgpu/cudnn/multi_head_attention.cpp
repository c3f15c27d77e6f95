// Multi-head attention (cudnn_adv_v9.h): the sequence data and attention descriptors, the buffer and
// weight queries, and the forward and backward passes, one kernel each timed as a roofline (FLOPs:
// dnn_flops.h attention_flops). Sizes are this simulator's model (docs/simgpu-cudnn.md), packed in
// data-type elements: weights = the Q, K, V projections (heads x proj x size each, where proj > 0),
// the O projection (o_proj x heads x v width) and, with CUDNN_ATTN_ENABLE_PROJ_BIASES, their biases
// (heads x proj, o_proj), each region 16-byte aligned; workspace = the projected Q, K, V, the scores
// (heads x query rows x kvMaxSeqLength) and the attention output before the O projection; the
// reserve space (training) keeps the same for the backward passes.
#include <algorithm>
#include <array>
#include <new>
#include <vector>

#include "dnn_state.h"

using namespace tbdsim;

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

struct cudnnSeqDataStruct {
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    std::array<int, CUDNN_SEQDATA_DIM_COUNT> dim{};  // indexed by cudnnSeqDataAxis_t
    std::array<cudnnSeqDataAxis_t, CUDNN_SEQDATA_DIM_COUNT> axes{};
    std::vector<int> lengths;  // batch x beam
    double padding = 0;
    bool has_padding = false;
    bool set = false;
};

struct cudnnAttnStruct {
    unsigned mode = 0;
    int heads = 0;
    double sm_scaler = 1;
    cudnnDataType_t type = CUDNN_DATA_FLOAT, compute = CUDNN_DATA_FLOAT;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    cudnnDropoutDescriptor_t attn_dropout = nullptr, post_dropout = nullptr;
    int q_size = 0, k_size = 0, v_size = 0;
    int q_proj = 0, k_proj = 0, v_proj = 0, o_proj = 0;
    int qo_max = 0, kv_max = 0, max_batch = 0, max_beam = 0;
    bool set = false;
};

namespace {

constexpr size_t kRegionAlignment = 16;

bool attention_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_HALF || t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE;
}

size_t aligned(size_t bytes) {
    return (bytes + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
}

int64_t v_width(const cudnnAttnStruct& a) {
    return a.v_proj > 0 ? a.v_proj : a.v_size;
}
int64_t o_size(const cudnnAttnStruct& a) {
    return a.o_proj > 0 ? a.o_proj : a.heads * v_width(a);
}
int64_t kv_sequences(const cudnnAttnStruct& a, int64_t batch, int64_t beam) {
    return (a.mode & CUDNN_ATTN_QUERYMAP_ONE_TO_ONE) != 0 ? batch * beam : batch;
}

// The elements of one weight kind, and its dims [heads or 1, proj, size].
struct Region {
    int64_t dim[3] = {0, 0, 0};
    int64_t elements() const { return dim[0] * dim[1] * dim[2]; }
};
Region region(const cudnnAttnStruct& a, int kind) {
    const bool bias = kind >= CUDNN_MH_ATTN_Q_BIASES;
    if (bias && (a.mode & CUDNN_ATTN_ENABLE_PROJ_BIASES) == 0) return {};
    const int base = kind % 4;
    const int64_t proj[] = {a.q_proj, a.k_proj, a.v_proj, a.o_proj};
    const int64_t size[] = {a.q_size, a.k_size, a.v_size, a.heads * v_width(a)};
    if (proj[base] == 0) return {};
    const int64_t heads = base == 3 ? 1 : a.heads;
    return {{heads, proj[base], bias ? 1 : size[base]}};
}

size_t region_offset(const cudnnAttnStruct& a, int kind, size_t element) {
    size_t offset = 0;
    for (int k = 0; k < kind; ++k) offset += aligned(static_cast<size_t>(region(a, k).elements()) * element);
    return offset;
}
size_t weight_bytes(const cudnnAttnStruct& a) {
    return region_offset(a, CUDNN_ATTN_WKIND_COUNT, dnn::element_bytes(a.type));
}

// Workspace and reserve: projected Q, K, V, scores and the pre-projection output at full sizes.
size_t buffer_bytes(const cudnnAttnStruct& a) {
    const auto rows_q = static_cast<size_t>(a.max_batch) * a.max_beam * a.qo_max;
    const auto rows_kv = static_cast<size_t>(kv_sequences(a, a.max_batch, a.max_beam)) * a.kv_max;
    const auto h = static_cast<size_t>(a.heads);
    const size_t qk = static_cast<size_t>(a.q_proj > 0 ? a.q_proj : a.q_size);
    const size_t elements =
        rows_q * h * qk + rows_kv * h * qk + rows_kv * h * v_width(a) + rows_q * h * a.kv_max + rows_q * h * v_width(a);
    return aligned(elements * dnn::element_bytes(a.type));
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnCreateSeqDataDescriptor(cudnnSeqDataDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnSeqDataStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroySeqDataDescriptor(cudnnSeqDataDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

// Four dims indexed by axis, the axes a permutation from outermost to innermost with VECT last, one
// sequence length per batch x beam entry, each within the time dim.
TBD_EXPORT cudnnStatus_t cudnnSetSeqDataDescriptor(cudnnSeqDataDescriptor_t d, cudnnDataType_t type, int dims,
                                                   const int dim[], const cudnnSeqDataAxis_t axes[],
                                                   size_t lengths_count, const int lengths[], void* padding_fill) {
    if (d == nullptr || dim == nullptr || axes == nullptr || lengths == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "seq data: null argument");
    }
    if (dims != CUDNN_SEQDATA_DIM_COUNT || !attention_type(type)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: 4 dims of HALF, FLOAT or DOUBLE expected");
    }
    std::array<bool, CUDNN_SEQDATA_DIM_COUNT> seen{};
    for (int i = 0; i < dims; ++i) {
        if (dim[i] <= 0 || axes[i] < 0 || axes[i] >= dims || seen[axes[i]]) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: dims must be positive and axes a permutation");
        }
        seen[axes[i]] = true;
    }
    if (axes[dims - 1] != CUDNN_SEQDATA_VECT_DIM) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: the vector dim must be innermost");
    }
    const int time = dim[CUDNN_SEQDATA_TIME_DIM];
    if (lengths_count != static_cast<size_t>(dim[CUDNN_SEQDATA_BATCH_DIM]) * dim[CUDNN_SEQDATA_BEAM_DIM]) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: one sequence length per batch x beam entry");
    }
    if (std::any_of(lengths, lengths + lengths_count, [time](int l) { return l < 0 || l > time; })) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: sequence length outside [0, time]");
    }
    d->type = type;
    std::copy(dim, dim + dims, d->dim.begin());
    std::copy(axes, axes + dims, d->axes.begin());
    d->lengths.assign(lengths, lengths + lengths_count);
    d->has_padding = padding_fill != nullptr;
    d->padding = padding_fill != nullptr ? dnn::read_scalar(padding_fill, type) : 0;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetSeqDataDescriptor(const cudnnSeqDataDescriptor_t d, cudnnDataType_t* type, int* dims,
                                                   int dims_requested, int dim[], cudnnSeqDataAxis_t axes[],
                                                   size_t* lengths_count, size_t lengths_requested, int lengths[],
                                                   void* padding_fill) {
    if (d == nullptr || type == nullptr || dims == nullptr || lengths_count == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "seq data: null argument");
    }
    if (!d->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: descriptor not set");
    if (dims_requested < 0 || (dims_requested > 0 && (dim == nullptr || axes == nullptr)) ||
        (lengths_requested > 0 && lengths == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "seq data: requested entries without arrays for them");
    }
    *type = d->type;
    *dims = CUDNN_SEQDATA_DIM_COUNT;
    const int n = std::min(dims_requested, CUDNN_SEQDATA_DIM_COUNT);
    std::copy_n(d->dim.begin(), n, dim);
    std::copy_n(d->axes.begin(), n, axes);
    *lengths_count = d->lengths.size();
    std::copy_n(d->lengths.begin(), std::min(lengths_requested, d->lengths.size()), lengths);
    if (padding_fill != nullptr) {
        if (d->type == CUDNN_DATA_DOUBLE) {
            *static_cast<double*>(padding_fill) = d->padding;
        } else {
            *static_cast<float*>(padding_fill) = static_cast<float>(d->padding);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnCreateAttnDescriptor(cudnnAttnDescriptor_t* d) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *d = new (std::nothrow) cudnnAttnStruct;
    return *d != nullptr ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

TBD_EXPORT cudnnStatus_t cudnnDestroyAttnDescriptor(cudnnAttnDescriptor_t d) {
    delete d;
    return CUDNN_STATUS_SUCCESS;
}

namespace {

// The documented constraints: positive heads, sizes, lengths, batch and beam; projections >= 0;
// Q and K projected to the same width (they are multiplied); FLOAT or DOUBLE compute of its data type
// (HALF data may compute in FLOAT or HALF).
cudnnStatus_t check_attention(const cudnnAttnStruct& a) {
    if (a.heads <= 0 || a.q_size <= 0 || a.k_size <= 0 || a.v_size <= 0 || a.qo_max <= 0 || a.kv_max <= 0 ||
        a.max_batch <= 0 || a.max_beam <= 0) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: heads, sizes, lengths, batch and beam must be positive");
    }
    if (a.q_proj < 0 || a.k_proj < 0 || a.v_proj < 0 || a.o_proj < 0) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: negative projection size");
    }
    if ((a.q_proj > 0 ? a.q_proj : a.q_size) != (a.k_proj > 0 ? a.k_proj : a.k_size)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: Q and K widths (after projection) differ");
    }
    if (!attention_type(a.type) || !attention_type(a.compute) ||
        (a.type != a.compute && !(a.type == CUDNN_DATA_HALF && a.compute == CUDNN_DATA_FLOAT))) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: unsupported data type and compute precision pair");
    }
    if (a.mode > (CUDNN_ATTN_QUERYMAP_ONE_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: unknown attnMode bits");
    }
    return CUDNN_STATUS_SUCCESS;
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnSetAttnDescriptor(cudnnAttnDescriptor_t d, unsigned mode, int heads, double sm_scaler,
                                                cudnnDataType_t type, cudnnDataType_t compute, cudnnMathType_t math,
                                                cudnnDropoutDescriptor_t attn_dropout,
                                                cudnnDropoutDescriptor_t post_dropout, int q_size, int k_size,
                                                int v_size, int q_proj, int k_proj, int v_proj, int o_proj, int qo_max,
                                                int kv_max, int max_batch, int max_beam) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const cudnnAttnStruct a{mode,         heads,  sm_scaler, type,      compute,  math,   attn_dropout,
                            post_dropout, q_size, k_size,    v_size,    q_proj,   k_proj, v_proj,
                            o_proj,       qo_max, kv_max,    max_batch, max_beam, true};
    if (const cudnnStatus_t s = check_attention(a); s != CUDNN_STATUS_SUCCESS) return s;
    *d = a;
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetAttnDescriptor(cudnnAttnDescriptor_t d, unsigned* mode, int* heads, double* sm_scaler,
                                                cudnnDataType_t* type, cudnnDataType_t* compute, cudnnMathType_t* math,
                                                cudnnDropoutDescriptor_t* attn_dropout,
                                                cudnnDropoutDescriptor_t* post_dropout, int* q_size, int* k_size,
                                                int* v_size, int* q_proj, int* k_proj, int* v_proj, int* o_proj,
                                                int* qo_max, int* kv_max, int* max_batch, int* max_beam) {
    if (d == nullptr) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (!d->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: descriptor not set");
    // Every output is optional: a null pointer skips it.
    const auto put = [](auto* out, auto value) {
        if (out != nullptr) *out = value;
    };
    put(mode, d->mode), put(heads, d->heads), put(sm_scaler, d->sm_scaler), put(type, d->type);
    put(compute, d->compute), put(math, d->math), put(attn_dropout, d->attn_dropout);
    put(post_dropout, d->post_dropout), put(q_size, d->q_size), put(k_size, d->k_size), put(v_size, d->v_size);
    put(q_proj, d->q_proj), put(k_proj, d->k_proj), put(v_proj, d->v_proj), put(o_proj, d->o_proj);
    put(qo_max, d->qo_max), put(kv_max, d->kv_max), put(max_batch, d->max_batch), put(max_beam, d->max_beam);
    return CUDNN_STATUS_SUCCESS;
}

TBD_EXPORT cudnnStatus_t cudnnGetMultiHeadAttnBuffers(cudnnHandle_t handle, const cudnnAttnDescriptor_t d,
                                                      size_t* weight_size, size_t* workspace_size,
                                                      size_t* reserve_size) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || weight_size == nullptr || workspace_size == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "attention: null descriptor or size output");
    }
    if (!d->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: descriptor not set");
    *weight_size = weight_bytes(*d);
    *workspace_size = buffer_bytes(*d);
    if (reserve_size != nullptr) *reserve_size = buffer_bytes(*d);  // null: inference only
    return CUDNN_STATUS_SUCCESS;
}

// Fills wDesc as a 3-dim packed tensor [heads (1 for O), proj, size (1 for biases)] and points wAddr
// into the weight buffer; a kind the descriptor has no use for gives wAddr null.
TBD_EXPORT cudnnStatus_t cudnnGetMultiHeadAttnWeights(cudnnHandle_t handle, const cudnnAttnDescriptor_t d,
                                                      cudnnMultiHeadAttnWeightKind_t kind, size_t weight_size,
                                                      const void* weights, cudnnTensorDescriptor_t w_desc,
                                                      void** w_addr) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (d == nullptr || weights == nullptr || w_desc == nullptr || w_addr == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "attention weights: null argument");
    }
    if (!d->set || kind < 0 || kind >= CUDNN_ATTN_WKIND_COUNT) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention weights: descriptor not set or unknown kind");
    }
    if (weight_size != weight_bytes(*d)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention weights: size differs from cudnnGetMultiHeadAttnBuffers");
    }
    const Region r = region(*d, kind);
    if (r.elements() == 0) {
        *w_addr = nullptr;
        return CUDNN_STATUS_SUCCESS;
    }
    w_desc->type = d->type;
    w_desc->dims = 3;
    for (int i = 0; i < 3; ++i) w_desc->dim[i] = static_cast<int>(r.dim[i]);
    w_desc->stride[2] = 1;
    w_desc->stride[1] = w_desc->dim[2];
    w_desc->stride[0] = w_desc->dim[1] * w_desc->dim[2];
    w_desc->set = true;
    const size_t offset = region_offset(*d, kind, dnn::element_bytes(d->type));
    *w_addr = static_cast<char*>(const_cast<void*>(weights)) + offset;
    return CUDNN_STATUS_SUCCESS;
}

namespace {

struct Sequences {
    const cudnnSeqDataStruct *q, *k, *v, *o;  // o: the output (or its gradient)
};

// Q and O: [time <= qo_max, batch <= max_batch, beam <= max_beam, q_size / o size]; K and V: the key
// time <= kv_max, batch and beam that the query map allows, k_size and v_size.
cudnnStatus_t check_sequences(const cudnnAttnStruct& a, const Sequences& s) {
    for (const cudnnSeqDataStruct* d : {s.q, s.k, s.v, s.o}) {
        if (d == nullptr || !d->set || d->type != a.type) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: sequence descriptor not set or of another type");
        }
    }
    const auto& q = s.q->dim;
    if (q[CUDNN_SEQDATA_TIME_DIM] > a.qo_max || q[CUDNN_SEQDATA_BATCH_DIM] > a.max_batch ||
        q[CUDNN_SEQDATA_BEAM_DIM] > a.max_beam || q[CUDNN_SEQDATA_VECT_DIM] != a.q_size) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: queries do not fit the attention descriptor");
    }
    auto o = s.q->dim;
    o[CUDNN_SEQDATA_VECT_DIM] = static_cast<int>(o_size(a));
    if (s.o->dim != o) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: output not shaped as the queries");
    const int kv_beam = (a.mode & CUDNN_ATTN_QUERYMAP_ONE_TO_ONE) != 0 ? q[CUDNN_SEQDATA_BEAM_DIM] : 1;
    for (const cudnnSeqDataStruct* d : {s.k, s.v}) {
        const auto& kv = d->dim;
        const int size = d == s.k ? a.k_size : a.v_size;
        if (kv[CUDNN_SEQDATA_TIME_DIM] > a.kv_max || kv[CUDNN_SEQDATA_BATCH_DIM] != q[CUDNN_SEQDATA_BATCH_DIM] ||
            kv[CUDNN_SEQDATA_BEAM_DIM] != kv_beam || kv[CUDNN_SEQDATA_VECT_DIM] != size) {
            return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: keys or values do not fit the descriptor");
        }
    }
    if (s.k->dim[CUDNN_SEQDATA_TIME_DIM] != s.v->dim[CUDNN_SEQDATA_TIME_DIM]) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: keys and values of different lengths");
    }
    return CUDNN_STATUS_SUCCESS;
}

// Query steps x the keys each one's window [loWinIdx, hiWinIdx) admits (clamped to the key length),
// over the steps run: all of them, or only currIdx (>= 0, inference one step at a time).
int64_t window_pairs(const int* lo, const int* hi, int q_steps, int kv_steps, int curr_idx) {
    int64_t pairs = 0;
    const int first = curr_idx >= 0 ? curr_idx : 0, last = curr_idx >= 0 ? curr_idx + 1 : q_steps;
    for (int t = first; t < last; ++t) {
        const int from = std::clamp(lo[t], 0, kv_steps), to = std::clamp(hi[t], 0, kv_steps);
        pairs += std::max(0, to - from);
    }
    return pairs;
}

struct Buffers {
    size_t weight_bytes;
    const void* weights;
    size_t workspace_bytes;
    void* workspace;
    size_t reserve_bytes;
    void* reserve;
};

cudnnStatus_t check_buffers(const cudnnAttnStruct& a, const Buffers& b, bool training) {
    if (b.weight_bytes != weight_bytes(a) || (b.weight_bytes > 0 && b.weights == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: weight buffer differs from cudnnGetMultiHeadAttnBuffers");
    }
    const size_t needed = buffer_bytes(a);
    if (b.workspace == nullptr || b.workspace_bytes < needed) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: workspace smaller than cudnnGetMultiHeadAttnBuffers");
    }
    if (training && (b.reserve == nullptr || b.reserve_bytes < needed)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: reserve space smaller than cudnnGetMultiHeadAttnBuffers");
    }
    return CUDNN_STATUS_SUCCESS;
}

// The steps run: every query step, or one (currIdx >= 0) whose Q and O projections alone are computed.
struct Steps {
    int64_t query_steps;
    int64_t pairs_per_sequence;
};

dnn::AttnShape shape_of(const cudnnAttnStruct& a, const Sequences& s, const Steps& steps) {
    const auto& q = s.q->dim;
    const int64_t batch = q[CUDNN_SEQDATA_BATCH_DIM], beam = q[CUDNN_SEQDATA_BEAM_DIM];
    dnn::AttnShape shape;
    shape.heads = a.heads;
    shape.q_size = a.q_size, shape.k_size = a.k_size, shape.v_size = a.v_size;
    shape.q_proj = a.q_proj, shape.k_proj = a.k_proj, shape.v_proj = a.v_proj, shape.o_proj = a.o_proj;
    shape.rows_q = batch * beam * steps.query_steps;
    shape.rows_kv = kv_sequences(a, batch, beam) * s.k->dim[CUDNN_SEQDATA_TIME_DIM];
    shape.window_pairs = batch * beam * steps.pairs_per_sequence;
    shape.biases = (a.mode & CUDNN_ATTN_ENABLE_PROJ_BIASES) != 0;
    return shape;
}

double sequence_bytes(const cudnnSeqDataStruct& d) {
    double elements = 1;
    for (const int n : d.dim) elements *= n;
    return elements * static_cast<double>(dnn::element_bytes(d.type));
}

// One kernel: its data (each sequence once, read or written; backward data reads Q, K, V and writes
// their gradients, twice), the weights (and their gradients), the workspace written and read back.
cudnnStatus_t run_attention(cudnnHandle_t handle, const cudnnAttnStruct& a, dnn::AttnPass pass, const Sequences& s,
                            const Buffers& b, const Steps& steps, const void* in, void* out) {
    const dnn::AttnShape shape = shape_of(a, s, steps);
    double data = sequence_bytes(*s.q) + sequence_bytes(*s.k) + sequence_bytes(*s.v) + sequence_bytes(*s.o);
    if (pass == dnn::AttnPass::BackwardData) data += data - sequence_bytes(*s.o);
    const double weights = static_cast<double>(b.weight_bytes) * (pass == dnn::AttnPass::BackwardWeights ? 2 : 1);
    dnn::Launch launch;
    launch.kernel = pass == dnn::AttnPass::Forward        ? dnn::kMhaForward
                    : pass == dnn::AttnPass::BackwardData ? dnn::kMhaBackwardData
                                                          : dnn::kMhaBackwardWeights;
    launch.grid_x = dnn::blocks_for(shape.rows_q * a.heads, 128);
    launch.threads = 128;
    launch.flops = dnn::attention_flops(pass, shape);
    launch.bytes = data + weights + 2.0 * static_cast<double>(buffer_bytes(a)) +
                   (b.reserve != nullptr ? 1 : 0) * static_cast<double>(b.reserve_bytes);
    launch.precision = dnn::convolution_precision(handle, a.type, a.math);
    launch.params = {in,          b.weights, out, b.workspace, b.workspace_bytes, shape.rows_q,
                     a.sm_scaler, 0,         0,   0,           nullptr,           {}};
    return dnn::run(handle, launch);
}

cudnnStatus_t check_call(cudnnHandle_t handle, const cudnnAttnStruct* a, const Sequences& s, const Buffers& b,
                         bool training) {
    if (handle == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
    if (a == nullptr || !a->set) return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention: descriptor not set");
    if (const cudnnStatus_t st = check_sequences(*a, s); st != CUDNN_STATUS_SUCCESS) return st;
    return check_buffers(*a, b, training);
}

}  // namespace

TBD_EXPORT cudnnStatus_t cudnnMultiHeadAttnForward(cudnnHandle_t handle, const cudnnAttnDescriptor_t a, int curr_idx,
                                                   const int lo_win[], const int hi_win[],
                                                   const int* /*dev_lengths_qo*/, const int* /*dev_lengths_kv*/,
                                                   const cudnnSeqDataDescriptor_t q_desc, const void* queries,
                                                   const void* /*residuals*/, const cudnnSeqDataDescriptor_t k_desc,
                                                   const void* keys, const cudnnSeqDataDescriptor_t v_desc,
                                                   const void* values, const cudnnSeqDataDescriptor_t o_desc, void* out,
                                                   size_t weight_bytes_in, const void* weights, size_t workspace_bytes,
                                                   void* workspace, size_t reserve_bytes, void* reserve) {
    const Sequences s{q_desc, k_desc, v_desc, o_desc};
    const Buffers b{weight_bytes_in, weights, workspace_bytes, workspace, reserve_bytes, reserve};
    if (const cudnnStatus_t st = check_call(handle, a, s, b, reserve != nullptr); st != CUDNN_STATUS_SUCCESS) {
        return st;
    }
    if (lo_win == nullptr || hi_win == nullptr || queries == nullptr || keys == nullptr || values == nullptr ||
        out == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "attention forward: null window or data pointer");
    }
    const int q_steps = q_desc->dim[CUDNN_SEQDATA_TIME_DIM];
    if (curr_idx >= q_steps || (curr_idx >= 0 && reserve != nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention forward: currIdx outside the queries or in training");
    }
    const int64_t pairs = window_pairs(lo_win, hi_win, q_steps, k_desc->dim[CUDNN_SEQDATA_TIME_DIM], curr_idx);
    const Steps steps{curr_idx >= 0 ? 1 : q_steps, pairs};
    return run_attention(handle, *a, dnn::AttnPass::Forward, s, b, steps, queries, out);
}

TBD_EXPORT cudnnStatus_t cudnnMultiHeadAttnBackwardData(
    cudnnHandle_t handle, const cudnnAttnDescriptor_t a, const int lo_win[], const int hi_win[],
    const int* /*dev_lengths_dqdo*/, const int* /*dev_lengths_dkdv*/, const cudnnSeqDataDescriptor_t do_desc,
    const void* dout, const cudnnSeqDataDescriptor_t dq_desc, void* dqueries, const void* queries,
    const cudnnSeqDataDescriptor_t dk_desc, void* dkeys, const void* keys, const cudnnSeqDataDescriptor_t dv_desc,
    void* dvalues, const void* values, size_t weight_bytes_in, const void* weights, size_t workspace_bytes,
    void* workspace, size_t reserve_bytes, void* reserve) {
    const Sequences s{dq_desc, dk_desc, dv_desc, do_desc};
    const Buffers b{weight_bytes_in, weights, workspace_bytes, workspace, reserve_bytes, reserve};
    if (const cudnnStatus_t st = check_call(handle, a, s, b, true); st != CUDNN_STATUS_SUCCESS) return st;
    if (lo_win == nullptr || hi_win == nullptr || dout == nullptr || dqueries == nullptr || queries == nullptr ||
        dkeys == nullptr || keys == nullptr || dvalues == nullptr || values == nullptr) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "attention backward data: null pointer");
    }
    const int64_t pairs =
        window_pairs(lo_win, hi_win, dq_desc->dim[CUDNN_SEQDATA_TIME_DIM], dk_desc->dim[CUDNN_SEQDATA_TIME_DIM], -1);
    const Steps steps{dq_desc->dim[CUDNN_SEQDATA_TIME_DIM], pairs};
    return run_attention(handle, *a, dnn::AttnPass::BackwardData, s, b, steps, dout, dqueries);
}

TBD_EXPORT cudnnStatus_t cudnnMultiHeadAttnBackwardWeights(
    cudnnHandle_t handle, const cudnnAttnDescriptor_t a, cudnnWgradMode_t add_grad,
    const cudnnSeqDataDescriptor_t q_desc, const void* queries, const cudnnSeqDataDescriptor_t k_desc, const void* keys,
    const cudnnSeqDataDescriptor_t v_desc, const void* values, const cudnnSeqDataDescriptor_t do_desc, const void* dout,
    size_t weight_bytes_in, const void* weights, void* dweights, size_t workspace_bytes, void* workspace,
    size_t reserve_bytes, void* reserve) {
    const Sequences s{q_desc, k_desc, v_desc, do_desc};
    const Buffers b{weight_bytes_in, weights, workspace_bytes, workspace, reserve_bytes, reserve};
    if (const cudnnStatus_t st = check_call(handle, a, s, b, true); st != CUDNN_STATUS_SUCCESS) return st;
    if (add_grad != CUDNN_WGRAD_MODE_ADD && add_grad != CUDNN_WGRAD_MODE_SET) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM, "attention backward weights: unknown addGrad mode");
    }
    if (queries == nullptr || keys == nullptr || values == nullptr || dout == nullptr ||
        (weight_bytes_in > 0 && dweights == nullptr)) {
        return dnn::fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "attention backward weights: null pointer");
    }
    const Steps steps{q_desc->dim[CUDNN_SEQDATA_TIME_DIM], 0};  // the weight gradients need no pairs
    return run_attention(handle, *a, dnn::AttnPass::BackwardWeights, s, b, steps, queries, dweights);
}
