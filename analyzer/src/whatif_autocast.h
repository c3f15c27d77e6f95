// Mixed precision as frameworks run it (docs/whatif.md, "Precision", `--precision bf16|fp16`): PyTorch's
// autocast keeps the FP32 weights, their gradients and the optimizer state, and runs the GEMMs (matrix
// multiplies, linear layers, convolutions) on lower-precision copies of their operands: a weight read
// by a GEMM gets a half-size copy per forward (cached, and saved for backward), an FP32 tensor read by
// a GEMM gets a half-size copy saved for backward beside it, and a GEMM writes a half-size output;
// elementwise work on such outputs stays in the lower precision, the ops autocast lists as FP32
// (softmax, norms, losses, reductions) do not. Which tensors the GEMMs read and write comes from the
// trace (the library calls with operand types: a, b read; c written), what kernels make from them from
// the kernels' pointer arguments (a tensor's first use makes it), not from sizes.
#pragma once

#include <cstdint>

#include "whatif_factors.h"
#include "whatif_run.h"

namespace tbdprof::analyzer::whatif {

constexpr uint8_t kGemmRead = 1;     // a GEMM read it (operand a or b) during its life
constexpr uint8_t kGemmWritten = 2;  // a GEMM wrote it (operand c) during its life
// A kernel outside the library calls used it after a GEMM first read it: the FP32 tensor is still
// needed after autocast's cast (an op that saves its own output for backward), so it is kept beside
// the copy; otherwise the copy replaces it once the cast is made (the FP32 tensor's last use).
constexpr uint8_t kUsedAfterRead = 4;
// An activation or temporary that runs in the lower precision under autocast: a GEMM's output, or
// made by a kernel from such tensors alone (no FP32 activation among its inputs) that is no op
// autocast keeps in FP32 (a softmax, a norm, a loss, a reduction).
constexpr uint8_t kLowerPrecision = 8;

// Marks, per real allocation and per pooled tensor of both readings, the roles above (run.gemm_roles,
// PoolTensor::gemm_role) and the times GEMMs read it (PoolTensor::gemm_reads_ns).
void mark_gemm_operands(const TraceFile& trace, RecordedRun& run);

// Whether `spec` is autocast-style mixed precision from an FP32 recording (the only case the
// per-tensor model changes; from a lower-precision recording the GEMM copies are already there).
bool autocast_applies(const ScenarioSpec& spec, const Model& model);

// What autocast multiplies a tensor's bytes by, on top of its category's factor (`ratio`: the element
// size of the new precision over the recorded one, 0.5): a lower-precision tensor (kLowerPrecision)
// takes `ratio`; an FP32
// activation or temporary a GEMM reads takes its copy's bytes (`ratio`), or keeps its own and gains the
// copy (1 + ratio) when other work uses it after the GEMM read it (kUsedAfterRead); a weight a GEMM
// reads gains its cached copy (1 + ratio); gradients, optimizer state, input, library workspaces and
// other FP32 tensors keep theirs. For allocations the pool does not replay (a segment takes its
// tensors' mean).
double autocast_multiplier(int category, bool library_workspace, uint8_t gemm_role, double ratio);

// The same for one request of a caching pool replayed by placement, whose copies are requests of their
// own (autocast_requests): a lower-precision tensor takes `ratio`; the rest keep their bytes.
double autocast_request_multiplier(int category, bool library_workspace, uint8_t gemm_role, double ratio);

// A caching pool's requests under autocast (`bytes`: the scenario's, as `tensors`), the copies added:
// per training step, one half-size copy of each weight a GEMM reads, from the step's first read to its
// last (autocast caches it for the forward; autograd keeps it for backward); one of each FP32
// activation or temporary a GEMM reads, from its first GEMM read to its last, the FP32 tensor then
// released at that first read unless other work uses it after (kUsedAfterRead).
struct AutocastRequests {
    std::vector<PoolTensor> tensors;
    std::vector<int64_t> bytes;
};
AutocastRequests autocast_requests(const RecordedRun& run, const std::vector<PoolTensor>& tensors,
                                   const std::vector<int64_t>& bytes, double ratio);

}  // namespace tbdprof::analyzer::whatif
