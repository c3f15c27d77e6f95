#!/usr/bin/env bash
# Records the cuDNN API test (cudnn_api_test.cpp) under `tbdprof --sim` with the simulator's truth and
# checks what the calls added with the fused convolution leave in the trace:
#  - the FLOPs of the trace's cuDNN library calls equal the truth's kernel FLOPs, exactly (the
#    collector counts as the simulator does: dnn_flops.h);
#  - each new call is a library call with its op: cudnnConvolutionBiasActivationForward
#    (convolution_forward), cudnnOpTensor, cudnnReduceTensor, cudnnDropoutForward/Backward, the batch
#    norm Ex calls, cudnnTransformTensor, LRN and divisive normalization, CTC loss, the normalization API, tensor-transform descriptors, the RNN passes (the forward's FLOPs by the documented rule);
#  - the multi-head attention, fused-ops and spatial transformer kernels (calls the collector does not
#    record) carry in the truth the FLOPs docs/simgpu-cudnn.md's rules give, computed by hand;
#  - the big cudnnOpTensor (three 16 MiB tensors, C not read) lasts bytes / bandwidth on the H100
#    model (a roofline: 50331648 B / 3.35 TB/s = 15024 ns), not FLOPs / peak.
#   record_api.sh TBDPROF CUDNN_API_TEST
set -u
tbdprof=$1 program=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-cudnn-api-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! TBDSIM_TRUTH="$work/truth.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
q() { sqlite3 "$work/trace.sqlite" "$1"; }

# The collector does not record the multi-head attention, fused-ops and spatial transformer calls (no
# FLOP rule in preload/cudnn_flops.h): their kernels (mha_*, fused_*, st_*) are left out of the
# equality and checked against the documented rules below.
truth=$(awk -F'\t' '$1 == "kernel" && $12 !~ /^(mha|fused|st)_/ { s += $7 } END { printf "%.0f", s }' "$work/truth.tsv")
trace=$(q "SELECT printf('%.0f', total(flops)) FROM library_calls WHERE name LIKE 'cudnn%'")
echo "FLOPs: truth $truth, trace $trace"
[ "$truth" = "$trace" ] || fail "trace FLOPs $trace != truth $truth"
[ "$truth" != 0 ] || fail "no FLOPs at all"

for pair in cudnnConvolutionBiasActivationForward:convolution_forward cudnnOpTensor:op_tensor \
            cudnnReduceTensor:reduce_tensor cudnnDropoutForward:dropout_forward \
            cudnnDropoutBackward:dropout_backward \
            cudnnBatchNormalizationForwardTrainingEx:batch_norm_forward_training \
            cudnnBatchNormalizationBackwardEx:batch_norm_backward cudnnTransformTensor:transform_tensor \
            cudnnRNNForward:rnn_forward cudnnRNNBackwardData_v8:rnn_backward_data \
            cudnnRNNBackwardWeights_v8:rnn_backward_weights cudnnLRNCrossChannelForward:lrn_forward \
            cudnnLRNCrossChannelBackward:lrn_backward cudnnDivisiveNormalizationForward:divisive_normalization_forward \
            cudnnDivisiveNormalizationBackward:divisive_normalization_backward cudnnCTCLoss:ctc_loss \
            cudnnCTCLoss_v8:ctc_loss cudnnNormalizationForwardTraining:batch_norm_forward_training \
            cudnnNormalizationForwardInference:batch_norm_forward_inference \
            cudnnNormalizationBackward:batch_norm_backward cudnnTransformTensorEx:transform_tensor \
            cudnnTransformFilter:transform_tensor; do
    name=${pair%%:*} op=${pair#*:}
    n=$(q "SELECT count(*) FROM library_calls WHERE name = '$name' AND op = '$op' AND flops > 0")
    [ "$n" -gt 0 ] || fail "no $name library call with op $op and FLOPs"
done
# Each new call's kernel runs inside it.
inside=$(q "SELECT count(*) FROM kernels k JOIN library_calls l ON l.id = k.library_call
            WHERE l.name IN ('cudnnOpTensor', 'cudnnReduceTensor', 'cudnnDropoutForward', 'cudnnDropoutBackward',
                             'cudnnBatchNormalizationForwardTrainingEx', 'cudnnBatchNormalizationBackwardEx',
                             'cudnnConvolutionBiasActivationForward', 'cudnnTransformTensor', 'cudnnRNNForward')")
calls=$(q "SELECT count(*) FROM library_calls
           WHERE name IN ('cudnnOpTensor', 'cudnnReduceTensor', 'cudnnDropoutForward', 'cudnnDropoutBackward',
                          'cudnnBatchNormalizationForwardTrainingEx', 'cudnnBatchNormalizationBackwardEx',
                          'cudnnConvolutionBiasActivationForward', 'cudnnTransformTensor', 'cudnnRNNForward')")
[ "$inside" -eq "$calls" ] || fail "$calls new library calls, $inside kernels inside them"

# The LSTM (2 layers, both directions, input 16, hidden 32, 14 steps run) by docs/simgpu-cudnn.md's rule:
# per direction, layer 0: 2*14*128*(16+32) GEMMs + 14*128*2 biases + 14*32*24 cell = 186368; layer 1
# (input 64): 344064 + 3584 + 10752 = 358400; both directions: 1089536.
rnn=$(q "SELECT printf('%.0f', flops) || ' ' || m || ' ' || n || ' ' || k || ' ' || batch FROM library_calls
         WHERE name = 'cudnnRNNForward'")
[ "$rnn" = "1089536 14 32 16 4" ] || fail "cudnnRNNForward recorded as '$rnn', want '1089536 14 32 16 4'"

# CTC loss with host labels (probs [10, 3, 6], labels 3, 2, 4 over 10, 8, 9 steps), softmax and
# gradients: 6 per element of probs (1080) + 8 per state and step (10*7 + 8*5 + 9*9 = 191 -> 1528) = 2608.
ctc=$(q "SELECT printf('%.0f', flops) FROM library_calls WHERE name = 'cudnnCTCLoss'")
[ "$ctc" = 2608 ] || fail "cudnnCTCLoss recorded $ctc FLOPs, want 2608"

# The truth's kernels whose names start with $1, as NAME:FLOPS in launch order.
truth_flops() {
    awk -F'\t' -v prefix="$1" '$1 == "kernel" && index($12, prefix) == 1 {
        printf "%s%s:%.0f", sep, $12, $7; sep = " " }' "$work/truth.tsv"
}

# Multi-head attention (docs/simgpu-cudnn.md): 2 heads, Q/K/V 16 wide projected to 8, O to 16, biases,
# 30 query rows (batch 3 x 10 steps), 36 key rows (3 x 12). Projections 2*2*(30+36+36)*16*8 = 52224,
# O projection 2*30*2*8*16 = 15360, biases 2*(30*8 + 36*16) + 30*16 = 2112; the core per admitted
# (query, key) pair 2*2*(8+8) + 4*2 = 72: full windows 3*10*12 = 360 pairs (25920), causal windows
# 3*55 = 165 (11880). Forward 95616 (full) and 81576 (causal); backward data projections + 2 x core
# = 119424; backward weights projections + biases = 69696. Inference at query step 4 alone (causal
# window of 5 keys): Q and O rows 3, projections 2*2*(3*128 + 2*36*128) = 38400,
# O projection 1536, biases 2*(3*8 + 36*16) + 3*16 = 1248, core 72 * 3*5 = 1080: 42264.
mha=$(truth_flops mha_)
want_mha="mha_fprop_kernel:95616 mha_fprop_kernel:81576 mha_fprop_kernel:42264 mha_dgrad_kernel:119424"
want_mha="$want_mha mha_wgrad_kernel:69696"
[ "$mha" = "$want_mha" ] || fail "attention kernels in the truth: '$mha', want '$want_mha'"

# Fused ops on x [2, 32, 8, 8], w [16, 32, 3, 3], padding 1 (convolution 2*2*16*32*9*64 = 1179648):
# with scale and bias (2 per x element, 8192), ReLU (0) and statistics (3 per y element, 6144)
# 1193984; the weight gradient alone 1179648; BN finalization for training, 13 x 16 channels = 208.
fused=$(truth_flops fused_)
want_fused="fused_scale_bias_act_conv_bnstats_kernel:1193984 fused_scale_bias_act_wgrad_kernel:1179648"
want_fused="$want_fused fused_bn_finalize_kernel:208"
[ "$fused" = "$want_fused" ] || fail "fused-ops kernels in the truth: '$fused', want '$want_fused'"

# Spatial transformer, output [2, 3, 8, 8] (128 grid points, 384 elements): grid generator 8 and 12
# per point (1024, 1536); sampler forward 8 per point + 10 per element = 4864, backward 16 + 16 = 8192.
st=$(truth_flops st_)
want_st="st_grid_generator_fw_kernel:1024 st_bilinear_sampler_fw_kernel:4864 st_bilinear_sampler_bw_kernel:8192"
want_st="$want_st st_grid_generator_bw_kernel:1536"
[ "$st" = "$want_st" ] || fail "spatial transformer kernels in the truth: '$st', want '$want_st'"

first_add=$(awk -F'\t' '$1 == "kernel" && $12 == "op_generic_tensor_kernel" { print $6 - $5; exit }' "$work/truth.tsv")
echo "first cudnnOpTensor kernel: $first_add ns (roofline on bytes: 15024)"
[ "$first_add" = 15024 ] || fail "the bandwidth-bound cudnnOpTensor lasted $first_add ns, not 15024"

[ "$failures" -eq 0 ] && echo "OK"
exit $((failures > 0))
