// The operands of cuDNN calls beyond the a, b, c and workspace columns (library_call.h's
// record_operand), with the direction cuDNN's API reference gives each: batch norm's scale and shift,
// running statistics (read and updated), saved mean and inverse variance (written forward, read
// backward), parameter gradients, residual z / dz and reserve space; an RNN's hidden and cell states
// and its reserve space (written by forward training, read and written by backward data, read by
// backward weights); dropout's reserve and random-number states.
#pragma once

#include "cudnn_hook_support.h"

namespace tbdprof::preload {

using raw::LibraryOperandRole;
using raw::OperandAccess;

// Batch norm's per-channel tensors: params (scale, shift and their gradients) and statistics.
struct NormTensors {
    uint64_t param_bytes = 0;  // from the scale/bias descriptor
    uint64_t stat_bytes = 0;   // from the mean/variance descriptor (the same one in the batch norm API)
};

// Forward training: scale is the record's b already; shift is read; running statistics are read and
// updated; the saved statistics are written (each may be null: cuDNN skips it then).
inline void record_norm_forward(ThreadState& thread, const raw::RawLibraryCall& r, const NormTensors& t,
                                const void* bias, void* running_mean, void* running_variance, void* save_mean,
                                void* save_inv_variance) {
    record_operand(thread, r, LibraryOperandRole::Bias, bias, t.param_bytes, OperandAccess::Read);
    record_operand(thread, r, LibraryOperandRole::RunningMean, running_mean, t.stat_bytes, OperandAccess::ReadWrite);
    record_operand(thread, r, LibraryOperandRole::RunningVariance, running_variance, t.stat_bytes,
                   OperandAccess::ReadWrite);
    record_operand(thread, r, LibraryOperandRole::SavedMean, save_mean, t.stat_bytes, OperandAccess::Write);
    record_operand(thread, r, LibraryOperandRole::SavedInvVariance, save_inv_variance, t.stat_bytes,
                   OperandAccess::Write);
}

// Inference: shift and the estimated statistics are read.
inline void record_norm_inference(ThreadState& thread, const raw::RawLibraryCall& r, const NormTensors& t,
                                  const void* bias, const void* mean, const void* variance) {
    record_operand(thread, r, LibraryOperandRole::Bias, bias, t.param_bytes, OperandAccess::Read);
    record_operand(thread, r, LibraryOperandRole::RunningMean, mean, t.stat_bytes, OperandAccess::Read);
    record_operand(thread, r, LibraryOperandRole::RunningVariance, variance, t.stat_bytes, OperandAccess::Read);
}

// Backward: scale (and shift, for a fused activation) and the saved statistics read; the parameter
// gradients written.
inline void record_norm_backward(ThreadState& thread, const raw::RawLibraryCall& r, const NormTensors& t,
                                 const void* scale, const void* bias, void* dscale, void* dbias, const void* saved_mean,
                                 const void* saved_inv_variance) {
    record_operand(thread, r, LibraryOperandRole::Scale, scale, t.param_bytes, OperandAccess::Read);
    record_operand(thread, r, LibraryOperandRole::Bias, bias, t.param_bytes, OperandAccess::Read);
    record_operand(thread, r, LibraryOperandRole::ScaleGradient, dscale, t.param_bytes, OperandAccess::Write);
    record_operand(thread, r, LibraryOperandRole::ShiftGradient, dbias, t.param_bytes, OperandAccess::Write);
    record_operand(thread, r, LibraryOperandRole::SavedMean, saved_mean, t.stat_bytes, OperandAccess::Read);
    record_operand(thread, r, LibraryOperandRole::SavedInvVariance, saved_inv_variance, t.stat_bytes,
                   OperandAccess::Read);
}

inline void record_reserve(ThreadState& thread, const raw::RawLibraryCall& r, const void* reserve, size_t bytes,
                           OperandAccess access) {
    if (bytes > 0) record_operand(thread, r, LibraryOperandRole::Reserve, reserve, bytes, access);
}

}  // namespace tbdprof::preload
