// cuBLAS GEMMs as library calls: shapes, types, the handle's math mode and the precision the arithmetic
// runs in (gemm_precision.h), FLOPs (2*m*n*k*batch), operand and workspace pointers,
// and the sequence numbers of the launches made inside the call (on this thread). The workspace is
// the one given with cublasSetWorkspace, or the handle's own (allocated inside cublasCreate).
// Real functions come from dlsym(RTLD_NEXT) or, for programs that dlopen cuBLAS, from the dlsym
// lookup we intercepted (library_call.h, shared with the cuBLASLt hooks).
#include <cublas_v2.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "cublas_common.h"
#include "library_call.h"

namespace tbdprof::preload {
namespace {

// ---- per-handle workspace, in a small fixed table
struct HandleEntry {
    std::atomic<uintptr_t> handle{0};
    uint64_t own_workspace = 0, own_bytes = 0;    // allocated by cublasCreate
    uint64_t user_workspace = 0, user_bytes = 0;  // cublasSetWorkspace
    bool using_user = false;
};
constexpr size_t kHandles = 256;
HandleEntry g_handles[kHandles];

HandleEntry* find_handle(cublasHandle_t handle, bool create) {
    const auto key = reinterpret_cast<uintptr_t>(handle);
    for (auto& entry : g_handles) {
        if (entry.handle.load(std::memory_order_acquire) == key) return &entry;
    }
    if (!create) return nullptr;
    for (auto& entry : g_handles) {
        uintptr_t expected = 0;
        if (entry.handle.compare_exchange_strong(expected, key)) return &entry;
    }
    return nullptr;
}

struct GemmShape {
    const char* name;
    raw::LibraryOp op;
    cublasHandle_t handle;
    int64_t m, n, k, batch;
    uint64_t a, b, c;
    cudaDataType a_type, b_type, c_type;
    int compute_type;
    cublasOperation_t transa, transb;
};

// Runs `call` as a recorded library call (library_call.h) described by `s`.
template <typename Call>
cublasStatus_t record_gemm(const GemmShape& s, Call&& call) {
    return record_library_call(call, [&](ThreadState& thread, raw::RawLibraryCall& record) {
        record.name_string = collector::intern_string(thread, s.name);
        record.stream = reinterpret_cast<uint64_t>(cublas_stream_of(s.handle));
        record.a = s.a;
        record.b = s.b;
        record.c = s.c;
        if (const HandleEntry* entry = find_handle(s.handle, false); entry != nullptr) {
            record.workspace = entry->using_user ? entry->user_workspace : entry->own_workspace;
            record.workspace_bytes = entry->using_user ? entry->user_bytes : entry->own_bytes;
        }
        record.m = s.m;
        record.n = s.n;
        record.k = s.k;
        record.batch = s.batch;
        record.flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
                       static_cast<double>(s.batch);
        record.op = s.op;
        record.a_type = static_cast<uint8_t>(s.a_type);
        record.b_type = static_cast<uint8_t>(s.b_type);
        record.c_type = static_cast<uint8_t>(s.c_type);
        record.compute_type = static_cast<uint8_t>(s.compute_type);
        // Asked at the call: the mode may have been set before the collector saw the handle.
        record_math_mode(record, s.handle, s.a_type, s.compute_type);
        record.transa = static_cast<uint8_t>(s.transa);
        record.transb = static_cast<uint8_t>(s.transb);
    });
}

uint64_t address(const void* p) { return reinterpret_cast<uint64_t>(p); }

LibraryFunction<decltype(&cublasCreate_v2)> real_create{"cublasCreate_v2"};
LibraryFunction<decltype(&cublasDestroy_v2)> real_destroy{"cublasDestroy_v2"};
LibraryFunction<decltype(&cublasSetWorkspace_v2)> real_set_workspace{"cublasSetWorkspace_v2"};
LibraryFunction<decltype(&cublasSetStream_v2)> real_set_stream{"cublasSetStream_v2"};
LibraryFunction<decltype(&cublasSgemm_v2)> real_sgemm{"cublasSgemm_v2"};
LibraryFunction<decltype(&cublasSgemmStridedBatched)> real_sgemm_strided{"cublasSgemmStridedBatched"};
// cublas_api.h overloads these two in C++ (an older computeType form): name the C entry points' types.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void*, const void*, cudaDataType, int, long long, const void*,
                                                  cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                  long long, int, cublasComputeType_t, cublasGemmAlgo_t);
LibraryFunction<GemmExFn> real_gemm_ex{"cublasGemmEx"};
LibraryFunction<GemmStridedBatchedExFn> real_gemm_strided_ex{"cublasGemmStridedBatchedEx"};

}  // namespace
}  // namespace tbdprof::preload

using namespace tbdprof::preload;

extern "C" TBD_VISIBLE cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
    auto real = real_create.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!tbdprof::collector::collector_enabled()) return real(handle);
    ThreadState& thread = tbdprof::collector::thread_state();
    thread.capture_first_alloc = true;
    thread.captured_alloc_address = 0;
    thread.captured_alloc_bytes = 0;
    const cublasStatus_t status = real(handle);
    thread.capture_first_alloc = false;
    if (status == CUBLAS_STATUS_SUCCESS && handle != nullptr) {
        if (HandleEntry* entry = find_handle(*handle, true); entry != nullptr) {
            entry->own_workspace = thread.captured_alloc_address;
            entry->own_bytes = thread.captured_alloc_bytes;
            entry->user_workspace = entry->user_bytes = 0;
            entry->using_user = false;
        }
    }
    return status;
}

extern "C" TBD_VISIBLE cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    auto real = real_destroy.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (HandleEntry* entry = find_handle(handle, false); entry != nullptr) entry->handle.store(0);
    return real(handle);
}

extern "C" TBD_VISIBLE cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, size_t bytes) {
    auto real = real_set_workspace.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(handle, workspace, bytes);
    if (status == CUBLAS_STATUS_SUCCESS) {
        if (HandleEntry* entry = find_handle(handle, true); entry != nullptr) {
            entry->user_workspace = address(workspace);
            entry->user_bytes = bytes;
            entry->using_user = true;
        }
    }
    return status;
}

extern "C" TBD_VISIBLE cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    auto real = real_set_stream.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(handle, stream);
    // Documented: setting a stream returns the handle to its default workspace.
    if (status == CUBLAS_STATUS_SUCCESS) {
        if (HandleEntry* entry = find_handle(handle, false); entry != nullptr) entry->using_user = false;
    }
    return status;
}

extern "C" TBD_VISIBLE cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                                     int m, int n, int k, const float* alpha, const float* A, int lda,
                                                     const float* B, int ldb, const float* beta, float* C, int ldc) {
    auto real = real_sgemm.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const GemmShape s{"cublasSgemm_v2", tbdprof::raw::LibraryOp::Gemm, handle, m, n, k, 1, address(A), address(B),
                      address(C), CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, ta, tb};
    return record_gemm(s, [&] { return real(handle, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); });
}

extern "C" TBD_VISIBLE cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t ta,
                                                                cublasOperation_t tb, int m, int n, int k,
                                                                const float* alpha, const float* A, int lda,
                                                                long long sa, const float* B, int ldb, long long sb,
                                                                const float* beta, float* C, int ldc, long long sc,
                                                                int batch) {
    auto real = real_sgemm_strided.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const GemmShape s{"cublasSgemmStridedBatched", tbdprof::raw::LibraryOp::GemmStridedBatched, handle, m, n, k,
                      batch, address(A), address(B), address(C), CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                      CUBLAS_COMPUTE_32F, ta, tb};
    return record_gemm(s, [&] {
        return real(handle, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
    });
}

extern "C" TBD_VISIBLE cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                                   int m, int n, int k, const void* alpha, const void* A,
                                                   cudaDataType at, int lda, const void* B, cudaDataType bt, int ldb,
                                                   const void* beta, void* C, cudaDataType ct, int ldc,
                                                   cublasComputeType_t compute, cublasGemmAlgo_t algo) {
    auto real = real_gemm_ex.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const GemmShape s{"cublasGemmEx", tbdprof::raw::LibraryOp::Gemm, handle, m, n, k, 1, address(A), address(B),
                      address(C), at, bt, ct, compute, ta, tb};
    return record_gemm(s, [&] {
        return real(handle, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute, algo);
    });
}

extern "C" TBD_VISIBLE cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType at, int lda, long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
    const void* beta, void* C, cudaDataType ct, int ldc, long long sc, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) {
    auto real = real_gemm_strided_ex.get();
    if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    const GemmShape s{"cublasGemmStridedBatchedEx", tbdprof::raw::LibraryOp::GemmStridedBatched, handle, m, n, k,
                      batch, address(A), address(B), address(C), at, bt, ct, compute, ta, tb};
    return record_gemm(s, [&] {
        return real(handle, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, batch,
                    compute, algo);
    });
}

namespace tbdprof::preload {

void* substitute_cublas_symbol(const char* name, void* result) {
    if (std::strncmp(name, "cublas", 6) != 0) return nullptr;
    // Remember the library's function (the program may never have linked cuBLAS), hand out ours.
    auto take = [&](auto& real, auto ours) -> void* { return substitute_library_function(real, ours, result); };
    if (std::strcmp(name, "cublasCreate_v2") == 0) return take(real_create, &cublasCreate_v2);
    if (std::strcmp(name, "cublasDestroy_v2") == 0) return take(real_destroy, &cublasDestroy_v2);
    if (std::strcmp(name, "cublasSetWorkspace_v2") == 0) return take(real_set_workspace, &cublasSetWorkspace_v2);
    if (std::strcmp(name, "cublasSetStream_v2") == 0) return take(real_set_stream, &cublasSetStream_v2);
    if (std::strcmp(name, "cublasSgemm_v2") == 0) return take(real_sgemm, &cublasSgemm_v2);
    if (std::strcmp(name, "cublasSgemmStridedBatched") == 0) return take(real_sgemm_strided, &cublasSgemmStridedBatched);
    if (std::strcmp(name, "cublasGemmEx") == 0) return take(real_gemm_ex, static_cast<GemmExFn>(&cublasGemmEx));
    if (std::strcmp(name, "cublasGemmStridedBatchedEx") == 0) return take(real_gemm_strided_ex, static_cast<GemmStridedBatchedExFn>(&cublasGemmStridedBatchedEx));
    remember_cublas_handle_query(name, result);
    return nullptr;
}

}  // namespace tbdprof::preload
