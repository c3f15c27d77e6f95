// gpt_arena_train: a GPT-2-style language model trained the way hand-written C/CUDA trainers do it:
// arenas. One cudaMalloc holds every parameter, one every gradient, one all activations, one each
// Adam moment (allocated at the first update), one the activation-gradient scratch reused by every
// layer's backward; tensors are pointers into them. Precision: FP32 with cuBLAS (`fp32`), the same
// with the handle in CUBLAS_TF32_TENSOR_OP_MATH (`tf32`), or BF16 parameters, gradients and
// activations with cuBLASLt GEMMs and an FP32 master copy of the weights in its own arena (`bf16`).
//
// Per step: the batch is copied in, forward, the per-token losses are copied back (mid-step), the
// gradient arena is zeroed with one memset, backward, the squared gradient norm is copied back
// (mid-step) to clip, and one AdamW kernel updates the whole parameter arena. NVTX: "Train step N"
// around each step; with --nvtx-phases also "forward", "backward", "optimizer" inside. Every
// --val-every steps a validation pass (forward only) and every --ckpt-every steps a checkpoint (each
// parameter tensor and both moments copied to the host) follow the step. Labels: one `segment` per
// arena and one `alloc` per tensor in it (samples/common/labels.h), and a `span` per step.
#include "common/check.h"
#include "common/labels.h"
#include "gpt_arena_kernels.cuh"
#include "gpt_arena_layout.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using tbdsample::Category;
using bf16 = __nv_bfloat16;

namespace {

using namespace gpt;

class Blas {
public:
    Blas(Precision precision, cudaStream_t stream, tbdsample::LabelWriter& labels)
        : precision_(precision), stream_(stream), labels_(labels) {
        CUBLAS_CHECK(cublasCreate(&handle_));
        CUBLAS_CHECK(cublasSetStream(handle_, stream));
        if (precision == Precision::tf32) CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH));
        if (precision == Precision::bf16) {
            CUBLAS_CHECK(cublasLtCreate(&lt_));
            CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
            labels_.record_alloc(workspace_, kWorkspaceBytes, Category::workspace);
        }
    }
    ~Blas() {
        if (workspace_) {
            labels_.record_free(workspace_);
            cudaFree(workspace_);
            cublasLtDestroy(lt_);
        }
        cublasDestroy(handle_);
    }
    Blas(const Blas&) = delete;
    Blas& operator=(const Blas&) = delete;

    // Column-major D = op(A) op(B) + beta D (+ bias over rows, forward only).
    void gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
              float* d, int ldd, const float* bias) {
        const float one = 1;
        CUBLAS_CHECK(cublasSgemm(handle_, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &one,
                                 a, lda, b, ldb, &beta, d, ldd));
        if (bias) {
            gpt::add_bias<float><<<gpt::grid_for(long(m) * n, 256), 256, 0, stream_>>>(d, bias, n, m);
            CUDA_CHECK_LAUNCH();
        }
    }
    void gemm(bool ta, bool tb, int m, int n, int k, const bf16* a, int lda, const bf16* b, int ldb, float beta,
              bf16* d, int ldd, const bf16* bias) {
        cublasLtMatmulDesc_t desc;
        CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
        if (bias) {
            cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
            CUBLAS_CHECK(
                cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
            CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
        }
        cublasLtMatrixLayout_t la, lb, ld;
        CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, ta ? k : m, ta ? m : k, lda));
        CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, tb ? n : k, tb ? k : n, ldb));
        CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, ldd));
        cublasLtMatmulPreference_t preference;
        CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
        size_t workspace_bytes = kWorkspaceBytes;
        CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &workspace_bytes, sizeof(workspace_bytes)));
        cublasLtMatmulHeuristicResult_t heuristic;
        int found = 0;
        CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt_, desc, la, lb, ld, ld, preference, 1, &heuristic, &found));
        if (found == 0) tbdsample::fail_message("no cuBLASLt algorithm for a BF16 GEMM", __FILE__, __LINE__);
        const float one = 1;
        CUBLAS_CHECK(cublasLtMatmul(lt_, desc, &one, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo, workspace_,
                                    kWorkspaceBytes, stream_));
        cublasLtMatmulPreferenceDestroy(preference);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(ld);
        cublasLtMatmulDescDestroy(desc);
    }

private:
    static constexpr size_t kWorkspaceBytes = 1u << 20;  // handed to every cublasLtMatmul
    Precision precision_;
    cudaStream_t stream_;
    tbdsample::LabelWriter& labels_;
    cublasHandle_t handle_ = nullptr;
    cublasLtHandle_t lt_ = nullptr;
    void* workspace_ = nullptr;
};

template <typename T>
class Trainer {
public:
    Trainer(const Config& config, tbdsample::LabelWriter& labels)
        : c_(config),
          labels_(labels),
          counts_(parameter_counts(config)),
          stream_(make_stream()),
          blas_(config.precision, stream_, labels),
          data_(config.vocab, unsigned(config.seed)) {
        long n = 0;
        for (long count : counts_) n += count;
        num_parameters_ = n;
        const bool low_precision = sizeof(T) == 2;
        params_ = new Arena(labels, tensor_list(counts_, sizeof(T), Category::weights), 1);
        if (low_precision)
            master_ = new Arena(labels, tensor_list(counts_, sizeof(float), Category::optimizer_state), 1);
        grads_ = new Arena(labels, tensor_list(counts_, sizeof(T), Category::gradients), 1);
        const long B = c_.batch, Tn = c_.max_t, C = c_.channels, L = c_.layers, NH = c_.heads, V = c_.vocab;
        const long BT = B * Tn;
        const size_t e = sizeof(T), f = sizeof(float);
        const Category a = Category::activations;
        acts_ = new Arena(labels, {{"encoded", BT * C * e, a},
                                   {"ln1", L * BT * C * e, a},
                                   {"ln1_mean", L * BT * f, a},
                                   {"ln1_rstd", L * BT * f, a},
                                   {"qkv", L * BT * 3 * C * e, a},
                                   {"atty", L * BT * C * e, a},
                                   {"att", L * B * NH * Tn * Tn * e, a},
                                   {"attproj", L * BT * C * e, a},
                                   {"residual2", L * BT * C * e, a},
                                   {"ln2", L * BT * C * e, a},
                                   {"ln2_mean", L * BT * f, a},
                                   {"ln2_rstd", L * BT * f, a},
                                   {"fch", L * BT * 4 * C * e, a},
                                   {"fch_gelu", L * BT * 4 * C * e, a},
                                   {"fcproj", L * BT * C * e, a},
                                   {"residual3", L * BT * C * e, a},
                                   {"lnf", BT * C * e, a},
                                   {"lnf_mean", BT * f, a},
                                   {"lnf_rstd", BT * f, a},
                                   {"logits", BT * V * e, a},
                                   // the loss operation's own per-token output, read only by the host
                                   {"losses", BT * f, Category::workspace}});
        // With --reuse-activations, dln, datty and dfch live in the activation arena instead, over
        // the forward tensors that backward has finished with (ln1/ln2/lnf, atty, fch_gelu).
        std::vector<Arena::Tensor> scratch_tensors;
        auto add = [&](Scratch which, Arena::Tensor tensor) {
            scratch_index_[which] = scratch_tensors.size();
            scratch_tensors.push_back(tensor);
        };
        add(DRESIDUAL, {"dresidual", BT * C * e, a});
        if (!c_.reuse_activations) add(DLN, {"dln", BT * C * e, a}), add(DATTY, {"datty", BT * C * e, a});
        add(DQKV, {"dqkv", BT * 3 * C * e, a});
        if (!c_.reuse_activations) add(DFCH, {"dfch", BT * 4 * C * e, a});
        // the attention backward's row sums: made and used inside it
        add(ROWDOT, {"rowdot", B * NH * Tn * f, Category::workspace});
        scratch_ = new Arena(labels, scratch_tensors);
        CUDA_CHECK(cudaMalloc(&inputs_, BT * sizeof(int)));
        labels_.record_alloc(inputs_, BT * sizeof(int), Category::input);
        CUDA_CHECK(cudaMalloc(&targets_, BT * sizeof(int)));
        labels_.record_alloc(targets_, BT * sizeof(int), Category::input);
        // Clipping's squared norm: written by the norm kernel, read back by the host, both inside
        // the clipping step.
        CUDA_CHECK(cudaMalloc(&norm_, sizeof(float)));
        labels_.record_alloc(norm_, sizeof(float), Category::workspace);
        initialise_parameters();
    }

    ~Trainer() {
        labels_.record_free(norm_), cudaFree(norm_);
        labels_.record_free(targets_), cudaFree(targets_);
        labels_.record_free(inputs_), cudaFree(inputs_);
        delete v_, delete m_, delete scratch_, delete acts_, delete grads_, delete master_, delete params_;
        cudaStreamDestroy(stream_);
    }

    // One batch: every parameter tensor is moved by eps along its unit gradient direction; the mean
    // loss must change by eps * |gradient| (central differences). Returns the tensors that fail.
    int gradient_check() {
        std::vector<int> tokens(size_t(c_.batch) * c_.max_t + 1), inputs(size_t(c_.batch) * c_.max_t),
            targets(inputs.size());
        std::vector<float> losses(inputs.size());
        next_batch(tokens, inputs, targets);
        forward(true);
        backward();
        const double eps = 1e-2;  // GELU and softmax are smooth: curvature costs less than float rounding
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < NUM_PARAMS; ++i) {
            std::vector<float> w(static_cast<size_t>(counts_[i])), g(w.size()), moved(w.size());
            CUDA_CHECK(cudaMemcpy(w.data(), param(Param(i)), w.size() * sizeof(float), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(g.data(), grad(Param(i)), g.size() * sizeof(float), cudaMemcpyDeviceToHost));
            double norm = 0;
            for (float x : g) norm += double(x) * x;
            norm = std::sqrt(norm);
            double side[2];
            for (int s = 0; s < 2; ++s) {
                double step = (s == 0 ? eps : -eps) / (norm > 0 ? norm : 1);
                for (size_t j = 0; j < w.size(); ++j) moved[j] = float(w[j] + step * g[j]);
                CUDA_CHECK(cudaMemcpy(param(Param(i)), moved.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
                forward(false);
                side[s] = mean_loss(losses);
            }
            CUDA_CHECK(cudaMemcpy(param(Param(i)), w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
            double slope = (side[0] - side[1]) / (2 * eps), error = std::fabs(slope - norm) / (norm + 1e-2);
            worst = std::max(worst, error);
            if (error > 0.02) {
                std::fprintf(stderr, "gpt_arena_train: gradient check: %s: |gradient| %g, slope of the loss %g\n",
                             kParamNames[i], norm, slope);
                ++bad;
            }
        }
        std::printf("gpt_arena_train: gradient_check tensors=%d failed=%d worst_relative_error=%.5f\n", int(NUM_PARAMS),
                    bad, worst);
        return bad;
    }

    int run() {
        if (c_.gradient_check) return gradient_check() ? 1 : 0;
        std::vector<int> tokens(size_t(c_.batch) * c_.max_t + 1), inputs(size_t(c_.batch) * c_.max_t),
            targets(inputs.size());
        std::vector<float> losses(inputs.size());
        std::vector<char> checkpoint(size_t(num_parameters_) * sizeof(float));
        int validations = 0, checkpoints = 0;
        float loss = 0, first_loss = 0;
        auto started = std::chrono::steady_clock::now();
        for (int step = 0; step < c_.iterations; ++step) {
            long long begin = tbdsample::monotonic_ns();
            std::string name = "Train step " + std::to_string(step);
            nvtxRangePushA(name.c_str());
            next_batch(tokens, inputs, targets);
            phase_begin("forward");
            forward(true);
            loss = mean_loss(losses);
            if (step == 0) first_loss = loss;
            phase_end();
            phase_begin("backward");
            backward();
            phase_end();
            phase_begin("optimizer");
            update(step + 1);
            phase_end();
            CUDA_CHECK(cudaStreamSynchronize(stream_));
            nvtxRangePop();
            labels_.record_span("training", step, begin, tbdsample::monotonic_ns());
            if (c_.val_every && (step + 1) % c_.val_every == 0) {
                begin = tbdsample::monotonic_ns();
                next_batch(tokens, inputs, targets);
                forward(false);
                std::printf("gpt_arena_train: step %d validation loss %.4f\n", step, double(mean_loss(losses)));
                labels_.record_span("validation", validations++, begin, tbdsample::monotonic_ns());
            }
            if (c_.ckpt_every && (step + 1) % c_.ckpt_every == 0) {
                begin = tbdsample::monotonic_ns();
                save_checkpoint(checkpoint);
                labels_.record_span("checkpoint", checkpoints++, begin, tbdsample::monotonic_ns());
            }
        }
        double elapsed_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
        std::printf("gpt_arena_train: iterations=%d final_loss=%.6f elapsed_ms=%.1f first_loss=%.6f parameters=%ld\n",
                    c_.iterations, double(loss), elapsed_ms, double(first_loss), num_parameters_);
        return 0;
    }

private:
    static cudaStream_t make_stream() {
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreate(&s));
        return s;
    }
    T* param(Param i) const { return params_->at<T>(i); }
    T* grad(Param i) const { return grads_->at<T>(i); }
    T* act(Act i) const { return acts_->at<T>(i); }
    float* actf(Act i) const { return acts_->at<float>(i); }
    T* scratch(Scratch i) const { return scratch_->at<T>(scratch_index_[i]); }
    // The buffer a backward step writes its input gradient into: the scratch arena's, or with
    // --reuse-activations the forward tensor `spent` that backward has just read for the last time.
    T* gradient_buffer(Scratch which, const T* spent) const {
        return c_.reuse_activations ? const_cast<T*>(spent) : scratch(which);
    }

    void phase_begin(const char* name) const {
        if (c_.nvtx_phases) nvtxRangePushA(name);
    }
    void phase_end() const {
        if (c_.nvtx_phases) nvtxRangePop();
    }

    void initialise_parameters() {
        // GPT-2's initialisation, roughly: small uniforms, layer-norm gains 1, biases 0; built on the
        // host and copied in tensor by tensor, as a checkpoint loader does.
        Arena* fp32 = master_ ? master_ : params_;
        for (int i = 0; i < NUM_PARAMS; ++i) {
            const bool is_gain = i == LN1W || i == LN2W || i == LNFW;
            const bool is_bias =
                i == LN1B || i == LN2B || i == LNFB || i == QKVB || i == ATTPROJB || i == FCB || i == FCPROJB;
            std::vector<float> values(static_cast<size_t>(counts_[i]));
            for (float& value : values) value = is_gain ? 1.0f : is_bias ? 0.0f : 0.07f * data_.uniform();
            CUDA_CHECK(
                cudaMemcpy(fp32->at<float>(i), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice));
            if (master_) {  // the BF16 parameters are rounded from the master copy
                gpt::copy_from_float<T><<<gpt::grid_for(counts_[i], 256), 256, 0, stream_>>>(
                    param(Param(i)), master_->at<float>(i), counts_[i]);
                CUDA_CHECK_LAUNCH();
            }
        }
        CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    void next_batch(std::vector<int>& tokens, std::vector<int>& inputs, std::vector<int>& targets) {
        data_.fill(tokens);
        for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = tokens[i], targets[i] = tokens[i + 1];
        CUDA_CHECK(cudaMemcpy(inputs_, inputs.data(), inputs.size() * sizeof(int), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(targets_, targets.data(), targets.size() * sizeof(int), cudaMemcpyHostToDevice));
    }

    float mean_loss(std::vector<float>& host) {
        CUDA_CHECK(
            cudaMemcpyAsync(host.data(), actf(LOSSES), host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_));
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        double sum = 0;
        for (float x : host) sum += x;
        return float(sum / double(host.size()));
    }

    // out[BT, OC] = inp[BT, C] W[OC, C]^T + bias
    void matmul_forward(T* out, const T* inp, const T* weight, const T* bias, int BT, int C, int OC) {
        blas_.gemm(true, false, OC, BT, C, weight, C, inp, C, 0.0f, out, OC, bias);
    }
    // dinp = dout W; dweight += dout^T inp; dbias += column sums of dout
    void matmul_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp, const T* weight, int BT, int C,
                         int OC) {
        // dweight first: with --reuse-activations dinp may be inp's own buffer
        blas_.gemm(false, true, C, OC, BT, inp, C, dout, OC, 1.0f, dweight, C, nullptr);
        blas_.gemm(false, false, C, BT, OC, weight, C, dout, OC, 0.0f, dinp, C, nullptr);
        if (dbias) {
            gpt::bias_backward<T><<<gpt::grid_for(OC, 64), 64, 0, stream_>>>(dbias, dout, BT, OC);
            CUDA_CHECK_LAUNCH();
        }
    }

    void forward(bool training) {
        const int B = c_.batch, Tn = c_.max_t, C = c_.channels, NH = c_.heads, V = c_.vocab, BT = B * Tn;
        const long btc = long(BT) * C;
        gpt::encoder_forward<T>
            <<<gpt::grid_for(btc, 256), 256, 0, stream_>>>(act(ENCODED), inputs_, param(WTE), param(WPE), BT, Tn, C);
        CUDA_CHECK_LAUNCH();
        for (int l = 0; l < c_.layers; ++l) {
            const T* residual = l == 0 ? act(ENCODED) : act(RESIDUAL3) + (l - 1) * btc;
            T* ln1 = act(LN1) + l * btc;
            T* qkv = act(QKV) + l * 3 * btc;
            T* atty = act(ATTY) + l * btc;
            T* att = act(ATT) + long(l) * B * NH * Tn * Tn;
            T* attproj = act(ATTPROJ) + l * btc;
            T* residual2 = act(RESIDUAL2) + l * btc;
            T* ln2 = act(LN2) + l * btc;
            T* fch = act(FCH) + l * 4 * btc;
            T* fch_gelu = act(FCH_GELU) + l * 4 * btc;
            T* fcproj = act(FCPROJ) + l * btc;
            T* residual3 = act(RESIDUAL3) + l * btc;
            gpt::layernorm_forward<T>
                <<<gpt::grid_for(BT, 64), 64, 0, stream_>>>(ln1, actf(LN1_MEAN) + l * BT, actf(LN1_RSTD) + l * BT,
                                                            residual, param(LN1W) + l * C, param(LN1B) + l * C, BT, C);
            CUDA_CHECK_LAUNCH();
            matmul_forward(qkv, ln1, param(QKVW) + long(l) * 3 * C * C, param(QKVB) + l * 3 * C, BT, C, 3 * C);
            gpt::attention_forward<T><<<gpt::grid_for(BT * NH, 64), 64, 0, stream_>>>(atty, att, qkv, B, Tn, C, NH);
            CUDA_CHECK_LAUNCH();
            matmul_forward(attproj, atty, param(ATTPROJW) + long(l) * C * C, param(ATTPROJB) + l * C, BT, C, C);
            gpt::residual_forward<T><<<gpt::grid_for(btc, 256), 256, 0, stream_>>>(residual2, residual, attproj, btc);
            CUDA_CHECK_LAUNCH();
            gpt::layernorm_forward<T>
                <<<gpt::grid_for(BT, 64), 64, 0, stream_>>>(ln2, actf(LN2_MEAN) + l * BT, actf(LN2_RSTD) + l * BT,
                                                            residual2, param(LN2W) + l * C, param(LN2B) + l * C, BT, C);
            CUDA_CHECK_LAUNCH();
            matmul_forward(fch, ln2, param(FCW) + long(l) * 4 * C * C, param(FCB) + l * 4 * C, BT, C, 4 * C);
            gpt::gelu_forward<T><<<gpt::grid_for(4 * btc, 256), 256, 0, stream_>>>(fch_gelu, fch, 4 * btc);
            CUDA_CHECK_LAUNCH();
            matmul_forward(fcproj, fch_gelu, param(FCPROJW) + long(l) * 4 * C * C, param(FCPROJB) + l * C, BT, 4 * C,
                           C);
            gpt::residual_forward<T><<<gpt::grid_for(btc, 256), 256, 0, stream_>>>(residual3, residual2, fcproj, btc);
            CUDA_CHECK_LAUNCH();
        }
        const T* last = act(RESIDUAL3) + (c_.layers - 1) * btc;
        gpt::layernorm_forward<T><<<gpt::grid_for(BT, 64), 64, 0, stream_>>>(act(LNF), actf(LNF_MEAN), actf(LNF_RSTD),
                                                                             last, param(LNFW), param(LNFB), BT, C);
        CUDA_CHECK_LAUNCH();
        matmul_forward(act(LOGITS), act(LNF), param(WTE), nullptr, BT, C, V);  // weights tied with wte
        gpt::fused_classifier<T>
            <<<gpt::grid_for(BT, 64), 64, 0, stream_>>>(act(LOGITS), actf(LOSSES), targets_, BT, V, training);
        CUDA_CHECK_LAUNCH();
    }

    void layernorm_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp, const T* weight,
                            const float* mean, const float* rstd, int N, int C) {
        gpt::layernorm_backward_input<T>
            <<<gpt::grid_for(N, 64), 64, 0, stream_>>>(dinp, dout, inp, weight, mean, rstd, N, C);
        CUDA_CHECK_LAUNCH();
        gpt::layernorm_backward_params<T>
            <<<gpt::grid_for(C, 64), 64, 0, stream_>>>(dweight, dbias, dout, inp, mean, rstd, N, C);
        CUDA_CHECK_LAUNCH();
    }

    void backward() {
        const int B = c_.batch, Tn = c_.max_t, C = c_.channels, NH = c_.heads, V = c_.vocab, BT = B * Tn;
        const long btc = long(BT) * C;
        CUDA_CHECK(cudaMemsetAsync(grads_->base(), 0, grads_->bytes(), stream_));
        CUDA_CHECK(cudaMemsetAsync(scratch(DRESIDUAL), 0, btc * sizeof(T), stream_));
        T* dresidual = scratch(DRESIDUAL);
        T* dln = gradient_buffer(DLN, act(LNF));
        // The classifier left the logits' gradient in place of the logits.
        matmul_backward(dln, grad(WTE), nullptr, act(LOGITS), act(LNF), param(WTE), BT, C, V);
        const T* last = act(RESIDUAL3) + (c_.layers - 1) * btc;
        layernorm_backward(dresidual, grad(LNFW), grad(LNFB), dln, last, param(LNFW), actf(LNF_MEAN), actf(LNF_RSTD),
                           BT, C);
        for (int l = c_.layers - 1; l >= 0; --l) {
            const T* residual = l == 0 ? act(ENCODED) : act(RESIDUAL3) + (l - 1) * btc;
            const T* ln1 = act(LN1) + l * btc;
            const T* qkv = act(QKV) + l * 3 * btc;
            const T* atty = act(ATTY) + l * btc;
            const T* att = act(ATT) + long(l) * B * NH * Tn * Tn;
            const T* residual2 = act(RESIDUAL2) + l * btc;
            const T* ln2 = act(LN2) + l * btc;
            const T* fch = act(FCH) + l * 4 * btc;
            const T* fch_gelu = act(FCH_GELU) + l * 4 * btc;
            T* dfch = gradient_buffer(DFCH, fch_gelu);
            matmul_backward(dfch, grad(FCPROJW) + long(l) * 4 * C * C, grad(FCPROJB) + l * C, dresidual, fch_gelu,
                            param(FCPROJW) + long(l) * 4 * C * C, BT, 4 * C, C);
            gpt::gelu_backward<T><<<gpt::grid_for(4 * btc, 256), 256, 0, stream_>>>(dfch, fch, 4 * btc);
            CUDA_CHECK_LAUNCH();
            dln = gradient_buffer(DLN, ln2);
            matmul_backward(dln, grad(FCW) + long(l) * 4 * C * C, grad(FCB) + l * 4 * C, dfch, ln2,
                            param(FCW) + long(l) * 4 * C * C, BT, C, 4 * C);
            layernorm_backward(dresidual, grad(LN2W) + l * C, grad(LN2B) + l * C, dln, residual2, param(LN2W) + l * C,
                               actf(LN2_MEAN) + l * BT, actf(LN2_RSTD) + l * BT, BT, C);
            T* datty = gradient_buffer(DATTY, atty);
            matmul_backward(datty, grad(ATTPROJW) + long(l) * C * C, grad(ATTPROJB) + l * C, dresidual, atty,
                            param(ATTPROJW) + long(l) * C * C, BT, C, C);
            float* rowdot = scratch_->at<float>(scratch_index_[ROWDOT]);
            T* dqkv = scratch(DQKV);
            int threads = BT * NH;
            gpt::attention_backward_rowdot<T>
                <<<gpt::grid_for(threads, 64), 64, 0, stream_>>>(rowdot, datty, att, qkv, B, Tn, C, NH);
            CUDA_CHECK_LAUNCH();
            gpt::attention_backward_query<T>
                <<<gpt::grid_for(threads, 64), 64, 0, stream_>>>(dqkv, rowdot, datty, att, qkv, B, Tn, C, NH);
            CUDA_CHECK_LAUNCH();
            gpt::attention_backward_key_value<T>
                <<<gpt::grid_for(threads, 64), 64, 0, stream_>>>(dqkv, rowdot, datty, att, qkv, B, Tn, C, NH);
            CUDA_CHECK_LAUNCH();
            dln = gradient_buffer(DLN, ln1);
            matmul_backward(dln, grad(QKVW) + long(l) * 3 * C * C, grad(QKVB) + l * 3 * C, dqkv, ln1,
                            param(QKVW) + long(l) * 3 * C * C, BT, C, 3 * C);
            layernorm_backward(dresidual, grad(LN1W) + l * C, grad(LN1B) + l * C, dln, residual, param(LN1W) + l * C,
                               actf(LN1_MEAN) + l * BT, actf(LN1_RSTD) + l * BT, BT, C);
        }
        gpt::encoder_backward<T><<<gpt::grid_for(long(V > Tn ? V : Tn) * C, 256), 256, 0, stream_>>>(
            grad(WTE), grad(WPE), dresidual, inputs_, BT, Tn, C, V);
        CUDA_CHECK_LAUNCH();
    }

    // Parameters, gradients, moments and master weights live in packed arenas of the same layout, so
    // one kernel updates them all, as an arena trainer's AdamW does.
    void update(int t) {
        const long n = num_parameters_;
        if (!m_) {  // the moments appear at the first update, zeroed
            m_ = new Arena(labels_, tensor_list(counts_, sizeof(float), Category::optimizer_state), 1);
            v_ = new Arena(labels_, tensor_list(counts_, sizeof(float), Category::optimizer_state), 1);
            CUDA_CHECK(cudaMemsetAsync(m_->base(), 0, m_->bytes(), stream_));
            CUDA_CHECK(cudaMemsetAsync(v_->base(), 0, v_->bytes(), stream_));
        }
        CUDA_CHECK(cudaMemsetAsync(norm_, 0, sizeof(float), stream_));
        gpt::squared_norm<T><<<32, 256, 0, stream_>>>(norm_, grads_->at<T>(0), n);
        CUDA_CHECK_LAUNCH();
        float norm_squared = 0;
        CUDA_CHECK(cudaMemcpyAsync(&norm_squared, norm_, sizeof(float), cudaMemcpyDeviceToHost, stream_));
        CUDA_CHECK(cudaStreamSynchronize(stream_));
        float norm = std::sqrt(norm_squared);
        float scale = norm > 1.0f ? 1.0f / norm : 1.0f;  // clip the global norm at 1
        const float lr = 3e-3f, beta1 = 0.9f, beta2 = 0.95f;
        gpt::adamw_update<T><<<gpt::grid_for(n, 256), 256, 0, stream_>>>(
            params_->at<T>(0), master_ ? master_->at<float>(0) : nullptr, grads_->at<T>(0), m_->at<float>(0),
            v_->at<float>(0), n, lr, beta1, beta2, 1 - std::pow(beta1, float(t)), 1 - std::pow(beta2, float(t)), 1e-8f,
            0.0f, scale);
        CUDA_CHECK_LAUNCH();
    }

    void save_checkpoint(std::vector<char>& host) {
        for (int i = 0; i < NUM_PARAMS; ++i)
            CUDA_CHECK(cudaMemcpy(host.data(), param(Param(i)), counts_[i] * sizeof(T), cudaMemcpyDeviceToHost));
        for (Arena* state : {m_, v_, master_})  // FP32 arenas of num_parameters_ floats each
            if (state) CUDA_CHECK(cudaMemcpy(host.data(), state->base(), state->bytes(), cudaMemcpyDeviceToHost));
    }

    Config c_;
    tbdsample::LabelWriter& labels_;
    std::vector<long> counts_;
    long num_parameters_ = 0;
    cudaStream_t stream_;
    Blas blas_;
    TokenSource data_;
    Arena *params_ = nullptr, *master_ = nullptr, *grads_ = nullptr, *acts_ = nullptr, *scratch_ = nullptr;
    Arena *m_ = nullptr, *v_ = nullptr;
    size_t scratch_index_[NUM_SCRATCH] = {};
    int *inputs_ = nullptr, *targets_ = nullptr;
    float* norm_ = nullptr;
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "gpt_arena_train: error: %s\n", message.c_str());
    std::exit(2);
}

int parse_count(const std::string& name, const char* text, int lo) {
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < lo || value > 100000)
        usage_error(name + " needs an integer >= " + std::to_string(lo) + ", got '" + text + "'");
    return int(value);
}

Config parse(int argc, char** argv) {
    Config c;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help") {
            std::printf(
                "usage: gpt_arena_train [--precision fp32|tf32|bf16] [--iterations N] [--batch N] [--seq-len N]\n"
                "       [--layers N] [--channels N] [--heads N] [--val-every N] [--ckpt-every N] [--nvtx-phases]\n"
                "       [--seed N] [--gradient-check] [--reuse-activations]\n");
            std::exit(0);
        }
        if (arg == "--gradient-check" || arg == "--reuse-activations") {
            (arg == "--gradient-check" ? c.gradient_check : c.reuse_activations) = true;
            continue;
        }
        if (arg == "--nvtx-phases") {
            c.nvtx_phases = true;
            continue;
        }
        if (i + 1 >= argc) usage_error("unknown option or missing value: " + arg);
        const char* value = argv[++i];
        if (arg == "--precision") {
            std::string v = value;
            if (v == "fp32")
                c.precision = Precision::fp32;
            else if (v == "tf32")
                c.precision = Precision::tf32;
            else if (v == "bf16")
                c.precision = Precision::bf16;
            else
                usage_error("--precision must be fp32, tf32 or bf16, got '" + v + "'");
        } else if (arg == "--iterations")
            c.iterations = parse_count(arg, value, 1);
        else if (arg == "--batch")
            c.batch = parse_count(arg, value, 1);
        else if (arg == "--seq-len")
            c.max_t = parse_count(arg, value, 1);
        else if (arg == "--layers")
            c.layers = parse_count(arg, value, 1);
        else if (arg == "--channels")
            c.channels = parse_count(arg, value, 1);
        else if (arg == "--heads")
            c.heads = parse_count(arg, value, 1);
        else if (arg == "--val-every")
            c.val_every = parse_count(arg, value, 0);
        else if (arg == "--ckpt-every")
            c.ckpt_every = parse_count(arg, value, 0);
        else if (arg == "--seed")
            c.seed = parse_count(arg, value, 0);
        else
            usage_error("unknown option: " + arg);
    }
    if (c.channels % c.heads != 0) usage_error("--heads must divide --channels");
    if (c.gradient_check && c.precision == Precision::bf16)
        usage_error("--gradient-check needs --precision fp32 or tf32");
    return c;
}

}  // namespace

int main(int argc, char** argv) {
    tbdsample::set_program_name("gpt_arena_train");
    Config config = parse(argc, argv);
    tbdsample::LabelWriter labels;
    labels.enable_timestamps();  // tensors inside arenas need times (labels.h)
    if (config.precision == Precision::bf16) return Trainer<bf16>(config, labels).run();
    return Trainer<float>(config, labels).run();
}
