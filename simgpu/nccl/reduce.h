// Element-wise reductions over NCCL's data types, as the simulated collectives compute them: the
// ranks' contributions are combined in rank order (acc = op(acc, x_r), r = 0 .. n-1), every rank
// computing the same sequence, so all ranks end with bit-identical results. 16-bit and 8-bit floating
// types are widened to float and rounded back (to nearest, ties to even) after every step, as a
// kernel that reduces in the narrow type does.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace tbdsim::nccl {

struct ReduceSpec {
    enum class Kind { Sum, Prod, Max, Min, PreMulSum, SumPostDiv } kind = Kind::Sum;
    double scalar = 1;  // PreMulSum: every contribution is multiplied by it first
    int divisor = 1;    // SumPostDiv: the sum is divided by it at the end (integer ncclAvg)
};

// The spec of `op` for `nranks` ranks: ncclAvg is PreMulSum by 1/n for floating types and
// SumPostDiv by n for integers (as NCCL computes it); user-created ops are looked up
// (register_pre_mul_sum). False for an unknown operator.
bool reduce_spec(ncclRedOp_t op, ncclDataType_t type, int nranks, ReduceSpec* spec);

// ncclRedOpCreatePreMulSum's operator: a scalar kept by value (host immediate) or read at every
// use (device residence: device memory is host memory in the simulator).
void register_pre_mul_sum(ncclRedOp_t op, const void* scalar, ncclDataType_t type, ncclScalarResidence_t residence);
void forget_pre_mul_sum(ncclRedOp_t op);

// acc[i] = first contribution (scaled for PreMulSum); then acc[i] = op(acc[i], x[i]) per further
// rank; finish applies SumPostDiv's division. `count` elements of `type`.
void reduce_first(void* acc, const void* x, size_t count, ncclDataType_t type, const ReduceSpec& spec);
void reduce_next(void* acc, const void* x, size_t count, ncclDataType_t type, const ReduceSpec& spec);
void reduce_finish(void* acc, size_t count, ncclDataType_t type, const ReduceSpec& spec);

// The narrow floating formats, exposed for tests: IEEE half, bfloat16, FP8 E4M3 (no infinity,
// saturating at ±448) and E5M2.
float narrow_to_float(uint32_t bits, ncclDataType_t type);
uint32_t float_to_narrow(float value, ncclDataType_t type);

}  // namespace tbdsim::nccl
