// The assumption notes of a memory what-if (whatif_notes.h).
#include "whatif_notes.h"

#include "tbdprof/analyzer/units.h"

namespace tbdprof::analyzer::whatif {

namespace {

// What autocast-style mixed precision keeps and changes (whatif_autocast.h).
std::string autocast_words(StoragePrecision recorded) {
    if (recorded != StoragePrecision::fp32)
        return "; autocast-style mixed precision from a run already at that precision: nothing changes";
    return "; autocast-style mixed precision (PyTorch's torch.autocast): FP32 weights, gradients and optimizer "
           "state stay; the tensors GEMMs write (library calls with operand types), and what kernels make from "
           "them alone, take half their bytes, except the outputs of ops autocast keeps in FP32 (kernels named "
           "softmax, norm, loss, sum, ...); each FP32 tensor or weight a GEMM reads gains a half-size copy from "
           "its first GEMM read to its last, the FP32 tensor released at that read unless other work uses it "
           "after (per training step for weights)";
}

}  // namespace

void add_assumption_notes(const WhatIfOptions& options, const Model& model, WhatIfResult& result) {
    if (options.batch_scale || options.batch_size) {
        result.notes.push_back(
            options.calibrate_path.empty()
                ? "batch: input, activations and temporaries scale in proportion; weights, gradients, optimizer "
                  "state, library workspaces, 'other' and untagged bytes stay fixed"
                : "batch: each allocation's bytes fitted as a + b x batch through the two recorded runs");
    }
    if (model.granularity > 1)
        result.notes.push_back("changed allocation sizes rounded up to " + format_bytes(model.granularity) +
                               ", the granularity every recorded size shows");
    if (options.precision && model.recorded_precision)
        result.notes.push_back(std::string("precision: recorded ") + storage_precision_name(*model.recorded_precision) +
                               (options.precision_recorded ? " (as given)" : " (from the GEMM operand types)") +
                               (options.precision_autocast ? autocast_words(*model.recorded_precision)
                                                           : "; weights, gradients and activations scale by element "
                                                             "size, input and workspace stay; mixed-precision Adam "
                                                             "keeps an FP32 master copy (4 B per parameter) in the "
                                                             "optimizer state"));
    if (result.checkpoint && result.checkpoint->recomputed_bytes == 0)
        result.notes.push_back("checkpointing: no activation saved for backward lies in a segment but the last (" +
                               std::to_string(result.checkpoint->layers) + " layers in segments of " +
                               std::to_string(result.checkpoint->segment_layers) +
                               "): nothing is recomputed, the timeline is the recorded one");
    else if (result.checkpoint)
        result.notes.push_back(
            "checkpointing: a layer is a forward library call with a weights operand (a GEMM, a convolution, a "
            "batch norm) and the kernels up to the next; " +
            std::to_string(result.checkpoint->layers) + " layers in segments of " +
            std::to_string(result.checkpoint->segment_layers) +
            "; the last segment runs as recorded, the others keep "
            "their output and recompute the rest in backward: " +
            format_bytes(result.checkpoint->recomputed_bytes) + " of activations per step, " +
            format_number(result.checkpoint->extra_forward_ns_per_step / 1e6) + " ms more forward per step (" +
            (result.checkpoint->iteration_duration_ns > 0
                 ? format_percent(result.checkpoint->extra_forward_ns_per_step /
                                  result.checkpoint->iteration_duration_ns)
                 : std::string("?")) +
            " of the recorded step)");
    if (options.zero_stage > 0)
        result.notes.push_back(
            "ZeRO: per rank; communication buffers added to each rank (category other): " +
            (options.zero_stage >= 3
                 ? "a reduce-scatter bucket of " + format_bytes(options.zero_bucket_bytes) +
                       " (at most the rank's gradients' bytes) and one layer's weights gathered whole (the largest "
                       "weights operand of one library call, else the largest weights tensor)"
                 : "one bucket of " + format_bytes(options.zero_bucket_bytes) +
                       " (at most the rank's gradients' or weights' bytes), serving backward's reduce-scatter and "
                       "the all-gather of the updated weights in turn"));
    if (options.zero_stage > 0 && options.zero_partition_tensors)
        result.notes.push_back(
            "ZeRO partition by whole tensors: the weights tensors of each rank assigned largest first to the rank with "
            "the fewest bytes so far (PyTorch's ZeroRedundancyOptimizer); every rank is given the busiest rank's "
            "share");
}

}  // namespace tbdprof::analyzer::whatif
