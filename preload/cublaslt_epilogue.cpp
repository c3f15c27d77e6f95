#include "cublaslt_epilogue.h"

namespace tbdprof::preload {
namespace {

using raw::LibraryOperandRole;
using raw::OperandAccess;

template <typename T>
bool read(decltype(&cublasLtMatmulDescGetAttribute) get, cublasLtMatmulDesc_t descriptor,
          cublasLtMatmulDescAttributes_t attribute, T* value) {
    size_t written = 0;
    return get(descriptor, attribute, value, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS && written == sizeof(T);
}

// Bytes of one element of a cudaDataType_t (0 unknown).
uint64_t element_bytes(int32_t type) {
    switch (type) {
        case CUDA_R_64F:
            return 8;
        case CUDA_R_32F:
        case CUDA_R_32I:
            return 4;
        case CUDA_R_16F:
        case CUDA_R_16BF:
            return 2;
        case CUDA_R_8I:
        case CUDA_R_8F_E4M3:
        case CUDA_R_8F_E5M2:
            return 1;
        default:
            return 0;
    }
}

bool has(uint32_t epilogue, uint32_t bits) {
    return (epilogue & bits) == bits;
}

// The bias vector: D's rows long (B's columns for BGRADB), one per batch entry `stride` elements apart.
void record_bias(ThreadState& thread, const raw::RawLibraryCall& record, uint32_t epilogue, const void* bias,
                 uint64_t element, int64_t stride, const OutputShape& d) {
    const bool gradient = epilogue == CUBLASLT_EPILOGUE_DRELU_BGRAD || epilogue == CUBLASLT_EPILOGUE_DGELU_BGRAD ||
                          epilogue == CUBLASLT_EPILOGUE_BGRADA || epilogue == CUBLASLT_EPILOGUE_BGRADB;
    if (!gradient && !has(epilogue, CUBLASLT_EPILOGUE_BIAS)) return;
    const uint64_t length = epilogue == CUBLASLT_EPILOGUE_BGRADB ? d.cols : d.rows;
    const uint64_t batches = d.batch > 1 && stride > 0 ? static_cast<uint64_t>(d.batch - 1) : 0;
    const uint64_t bytes = (batches * static_cast<uint64_t>(stride) + length) * element;
    record_operand(thread, record, gradient ? LibraryOperandRole::BiasGradient : LibraryOperandRole::Bias, bias, bytes,
                   gradient ? OperandAccess::Write : OperandAccess::Read);
}

// The aux matrix: ld x D's columns, in bits for the ReLU masks; written forward, read backward.
void record_aux(ThreadState& thread, const raw::RawLibraryCall& record, uint32_t epilogue, const void* aux,
                uint64_t element, int64_t ld, int64_t stride, const OutputShape& d) {
    const bool backward = has(epilogue, CUBLASLT_EPILOGUE_DRELU) || has(epilogue, CUBLASLT_EPILOGUE_DGELU);
    if (!backward && !has(epilogue, 128)) return;  // 128: the *_AUX bit of the forward epilogues
    const bool relu_mask = has(epilogue, CUBLASLT_EPILOGUE_RELU_AUX) || has(epilogue, CUBLASLT_EPILOGUE_DRELU);
    uint64_t bytes = 0;
    if (ld > 0 && d.cols > 0) {
        const uint64_t batches = d.batch > 1 && stride > 0 ? static_cast<uint64_t>(d.batch - 1) : 0;
        const uint64_t elements = batches * static_cast<uint64_t>(stride) + static_cast<uint64_t>(ld) * d.cols;
        bytes = relu_mask ? (elements + 7) / 8 : elements * element;
    }
    record_operand(thread, record, LibraryOperandRole::EpilogueAux, aux, bytes,
                   backward ? OperandAccess::Read : OperandAccess::Write);
}

}  // namespace

void record_epilogue_operands(ThreadState& thread, const raw::RawLibraryCall& record,
                              decltype(&cublasLtMatmulDescGetAttribute) get, cublasLtMatmulDesc_t descriptor,
                              const OutputShape& d) {
    uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (get == nullptr || descriptor == nullptr || !read(get, descriptor, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue) ||
        epilogue == CUBLASLT_EPILOGUE_DEFAULT)
        return;
    // Types default to -1: the output's type.
    int32_t bias_type = -1, aux_type = -1;
    int64_t bias_stride = 0, aux_ld = 0, aux_stride = 0;
    const void* bias = nullptr;
    const void* aux = nullptr;
    read(get, descriptor, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type);
    read(get, descriptor, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type);
    read(get, descriptor, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride);
    read(get, descriptor, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld);
    read(get, descriptor, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride);
    const auto d_type = static_cast<int32_t>(d.type);
    if (read(get, descriptor, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias))
        record_bias(thread, record, epilogue, bias, element_bytes(bias_type >= 0 ? bias_type : d_type), bias_stride, d);
    if (read(get, descriptor, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux))
        record_aux(thread, record, epilogue, aux, element_bytes(aux_type >= 0 ? aux_type : d_type), aux_ld, aux_stride,
                   d);
}

}  // namespace tbdprof::preload
