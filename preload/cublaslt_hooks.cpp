// cuBLASLt matmuls as library calls. cublasLtMatmul carries its problem in descriptors, so after the
// real call returns the hook reads transposes and compute type from the matmul descriptor, and type,
// rows, columns and batch count from the A, B and D layouts, with the library's own Get*Attribute
// functions (the descriptors are opaque). It records m, n, k, batch, 2*m*n*k*batch FLOPs, A, B and D
// (as the output operand c), the workspace pointer and size passed to the call, its stream, and the
// launches made inside; the epilogue's bias and aux buffers are extra operands (cublaslt_epilogue.h). What cannot be
// read is left 0 (FLOPs included); the caller always gets the real call's status.
#include <cublasLt.h>
#include <dlfcn.h>

#include <cstring>

#include "cublaslt_epilogue.h"
#include "gemm_precision.h"
#include "library_call.h"

namespace tbdprof::preload {
namespace {

LibraryFunction<decltype(&cublasLtMatmul)> real_matmul{"cublasLtMatmul"};
LibraryFunction<decltype(&cublasLtMatmulDescGetAttribute)> real_desc_get{"cublasLtMatmulDescGetAttribute"};
LibraryFunction<decltype(&cublasLtMatrixLayoutGetAttribute)> real_layout_get{"cublasLtMatrixLayoutGetAttribute"};

// A program that dlopens cuBLASLt and looks up only cublasLtMatmul gives RTLD_NEXT nothing to find:
// take the getter from the library that defines the matmul we were handed.
template <typename F>
F getter(LibraryFunction<F>& function) {
    if (F f = function.get(); f != nullptr) return f;
    Dl_info info{};
    void* matmul = reinterpret_cast<void*>(real_matmul.fn.load(std::memory_order_acquire));
    if (matmul == nullptr || dladdr(matmul, &info) == 0 || info.dli_fname == nullptr) return nullptr;
    void* library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) return nullptr;
    function.remember(real_dlsym(library, function.name));
    dlclose(library);  // only drops the reference RTLD_NOLOAD took
    return function.fn.load(std::memory_order_acquire);
}

template <typename Get, typename Descriptor, typename Attribute, typename T>
bool read_attribute(Get get, Descriptor descriptor, Attribute attribute, T* value) {
    size_t written = 0;
    return get(descriptor, attribute, value, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS && written == sizeof(T);
}

struct Layout {
    uint32_t type = 0;
    uint64_t rows = 0, cols = 0;
    int32_t batch = 1;
};

bool read_layout(decltype(&cublasLtMatrixLayoutGetAttribute) get, cublasLtMatrixLayout_t descriptor, Layout* out) {
    if (get == nullptr || descriptor == nullptr) return false;
    return read_attribute(get, descriptor, CUBLASLT_MATRIX_LAYOUT_TYPE, &out->type) &&
           read_attribute(get, descriptor, CUBLASLT_MATRIX_LAYOUT_ROWS, &out->rows) &&
           read_attribute(get, descriptor, CUBLASLT_MATRIX_LAYOUT_COLS, &out->cols) &&
           read_attribute(get, descriptor, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &out->batch);
}

struct Operation {
    int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
    int32_t compute_type = 0;
};

bool read_operation(cublasLtMatmulDesc_t descriptor, Operation* out) {
    auto get = getter(real_desc_get);
    if (get == nullptr || descriptor == nullptr) return false;
    return read_attribute(get, descriptor, CUBLASLT_MATMUL_DESC_TRANSA, &out->transa) &&
           read_attribute(get, descriptor, CUBLASLT_MATMUL_DESC_TRANSB, &out->transb) &&
           read_attribute(get, descriptor, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &out->compute_type);
}

// The shape: D is m x n, op(A) m x k; the batch count is D's (cuBLASLt requires all to agree).
void describe_shape(const Operation* operation, const Layout* a, const Layout* b, const Layout* d,
                    raw::RawLibraryCall& record) {
    if (operation != nullptr) {
        record.compute_type = static_cast<uint8_t>(operation->compute_type);
        // cuBLASLt has no math mode: the compute type decides.
        record.transa = static_cast<uint8_t>(operation->transa);
        record.transb = static_cast<uint8_t>(operation->transb);
    }
    if (a != nullptr) record.a_type = static_cast<uint8_t>(a->type);
    if (b != nullptr) record.b_type = static_cast<uint8_t>(b->type);
    if (operation != nullptr && a != nullptr)
        record.precision = gemm_precision(a->type, operation->compute_type, kMathModeUnknown, tf32_disabled_by_environment());
    if (d == nullptr) return;
    record.c_type = static_cast<uint8_t>(d->type);
    record.m = static_cast<int64_t>(d->rows);
    record.n = static_cast<int64_t>(d->cols);
    record.batch = d->batch;
    record.op = d->batch > 1 ? raw::LibraryOp::GemmStridedBatched : raw::LibraryOp::Gemm;
    if (operation == nullptr || a == nullptr) return;
    record.k = static_cast<int64_t>(operation->transa == CUBLAS_OP_N ? a->cols : a->rows);
    record.flops = 2.0 * static_cast<double>(record.m) * static_cast<double>(record.n) *
                   static_cast<double>(record.k) * static_cast<double>(record.batch);
}

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;

extern "C" TBD_VISIBLE cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                                     const void* alpha, const void* A, cublasLtMatrixLayout_t a_desc,
                                                     const void* B, cublasLtMatrixLayout_t b_desc, const void* beta,
                                                     const void* C, cublasLtMatrixLayout_t c_desc, void* D,
                                                     cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo,
                                                     void* workspace, size_t workspace_bytes, cudaStream_t stream) {
    auto real = real_matmul.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const auto call = [&] {
        return real(handle, desc, alpha, A, a_desc, B, b_desc, beta, C, c_desc, D, d_desc, algo, workspace,
                    workspace_bytes, stream);
    };
    return record_library_call(call, [&](ThreadState& thread, tbdprof::raw::RawLibraryCall& record) {
        record.name_string = tbdprof::collector::intern_string(thread, "cublasLtMatmul");
        record.op = tbdprof::raw::LibraryOp::Gemm;
        record.stream = reinterpret_cast<uint64_t>(stream);
        record.a = reinterpret_cast<uint64_t>(A);
        record.b = reinterpret_cast<uint64_t>(B);
        record.c = reinterpret_cast<uint64_t>(D);  // the output; C (read when beta != 0) is not recorded
        record.workspace = reinterpret_cast<uint64_t>(workspace);
        record.workspace_bytes = workspace_bytes;
        Operation operation;
        Layout a, b, d;
        const auto layout_get = getter(real_layout_get);
        const bool have_operation = read_operation(desc, &operation);
        const bool have_a = read_layout(layout_get, a_desc, &a);
        const bool have_b = read_layout(layout_get, b_desc, &b);
        const bool have_d = read_layout(layout_get, d_desc, &d);
        describe_shape(have_operation ? &operation : nullptr, have_a ? &a : nullptr, have_b ? &b : nullptr,
                       have_d ? &d : nullptr, record);
        if (have_d)
            record_epilogue_operands(thread, record, getter(real_desc_get), desc, {d.type, d.rows, d.cols, d.batch});
    });
}

namespace tbdprof::preload {

void* substitute_cublaslt_symbol(const char* name, void* result) {
    if (std::strncmp(name, "cublasLt", 8) != 0) return nullptr;
    if (std::strcmp(name, "cublasLtMatmul") == 0) {
        return substitute_library_function(real_matmul, &cublasLtMatmul, result);
    }
    // Not wrapped, but the hook needs them; a dlopen'ed library is not reachable through RTLD_NEXT.
    if (std::strcmp(name, "cublasLtMatmulDescGetAttribute") == 0) real_desc_get.remember(result);
    if (std::strcmp(name, "cublasLtMatrixLayoutGetAttribute") == 0) real_layout_get.remember(result);
    return nullptr;
}

}  // namespace tbdprof::preload
