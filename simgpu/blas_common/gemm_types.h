// Data and compute types of a GEMM: which precision the cost model times it at, how alpha and beta
// are stored, and how wide each element is. Shared by cuBLAS's Ex routines and cuBLASLt's matmul.
#pragma once

#include <cublas_api.h>
#include <library_types.h>
#include <simgpu/private_api.h>

#include <cstddef>

namespace tbdsim::blas {

// How alpha and beta are stored (their type follows the compute or scale type).
enum class ScalarType { Half, Float, Double, Int32 };

// A host-memory scalar of the given type, widened to double.
double read_host_scalar(const void* value, ScalarType type);

// The precision and scalar type of a GEMM with these operand types and compute type, or
// NOT_SUPPORTED for combinations we do not model. `plain_fp32` is what COMPUTE_32F on FP32 data runs
// at: cuBLAS follows its math mode there, cuBLASLt runs FP32.
cublasStatus_t classify_gemm_types(cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                                   cublasComputeType_t compute_type, TbdsimPrecision plain_fp32,
                                   TbdsimPrecision* precision, ScalarType* scalar_type);

// Bytes per element of a real data type (0 for types we do not model).
std::size_t element_bytes_of(cudaDataType type);
// Bytes per element of the data a precision reads (cuBLAS's strided batches advance by these).
std::size_t element_bytes_of(TbdsimPrecision precision);

}  // namespace tbdsim::blas
