// attention_train: trains a small transformer-style sequence classifier on synthetic data.
//
// Each micro-batch: a [batch, seq_len, input] sequence and its labels are copied host->device.
// Forward: an input projection (SGEMM) to model_dim; per block, pre-norm self-attention
//   Y = LayerNorm(H); Q, K, V = Y W^T + b (three SGEMMs), each split into heads;
//   scores = Q K^T / sqrt(head_dim) (cublasSgemmStridedBatched, batch * heads matrices);
//   P = softmax(scores); context = P V (cublasGemmStridedBatchedEx, FP32); heads merged;
//   H' = H + context W_o^T + b_o (residual);
// then mean pooling over the sequence, a linear classifier and softmax/cross-entropy. Backward runs
// the same in reverse, with the batched GEMMs of attention: dP = dC V^T, dV = P^T dC, softmax
// backward, dQ = dS K, dK = dS^T Q (all strided-batched over batch * heads).
//
// Memory: what backward needs (normalised inputs and their statistics, per-head Q, K, V, attention
// probabilities, merged context, every block's output) is kept until the end of the micro-batch; the
// token-major projections, raw scores and per-head context are freed as soon as they have been
// reshaped or normalised, and each block's activation gradients are freed when that block's backward
// is done. Attention memory scales with batch * heads * seq_len^2.
#include "attention_kernels.h"
#include "common/check.h"
#include "common/kernels.h"
#include "common/options.h"
#include "common/synthetic_data.h"
#include "common/training.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace {

using tbdsample::BlasContext;
using tbdsample::Category;
using tbdsample::TensorScope;

struct AttentionShape {
    int seq_len = 64;
    int heads = 4;
};

// Parameter indices of one attention block. Projections are in the order Q, K, V.
struct BlockParameters {
    std::size_t norm_gain = 0;
    std::size_t norm_bias = 0;
    std::array<std::size_t, 3> projection_weight{};
    std::array<std::size_t, 3> projection_bias{};
    std::size_t output_weight = 0;
    std::size_t output_bias = 0;
};

// What backward needs from the forward pass of one block.
struct BlockSaved {
    const float* input = nullptr;       // H, the residual stream entering the block [tokens, dim]
    float* normed = nullptr;            // Y = LayerNorm(H)
    float* row_mean = nullptr;          // [tokens]
    float* row_rstd = nullptr;          // [tokens]
    std::array<float*, 3> per_head{};   // Q, K, V as [batch * heads, seq, head_dim]
    float* probabilities = nullptr;     // P [batch * heads, seq, seq]
    float* context = nullptr;           // merged P V [tokens, dim]
    float* output = nullptr;            // H' = H + context W_o^T + b_o
};

class AttentionModel final : public tbdsample::TrainingModel {
public:
    AttentionModel(tbdsample::TrainingSession& session, AttentionShape shape)
        : session_(session), options_(session.options()), shape_(shape),
          head_dim_(options_.hidden / shape.heads),
          data_(shape.seq_len * options_.input, options_.classes, options_.seed),
          input_stager_(sizeof(float) * tokens() * options_.input, session.stream()),
          label_stager_(sizeof(int) * options_.batch, session.stream()) {
        tbdsample::ParameterSet& parameters = session.parameters();
        const std::size_t dim = static_cast<std::size_t>(options_.hidden);
        const float projection_scale = std::sqrt(3.0f / static_cast<float>(dim));
        embed_weight_ = parameters.add("embed.weight", dim * options_.input,
                                       std::sqrt(3.0f / static_cast<float>(options_.input)));
        embed_bias_ = parameters.add("embed.bias", dim, 0.0f);
        for (int layer = 0; layer < options_.layers; ++layer) {
            std::string prefix = "block" + std::to_string(layer) + ".";
            BlockParameters block;
            block.norm_gain = parameters.add_constant(prefix + "norm.weight", dim, 1.0f);
            block.norm_bias = parameters.add(prefix + "norm.bias", dim, 0.0f);
            const char* names[3] = {"query", "key", "value"};
            for (int i = 0; i < 3; ++i) {
                block.projection_weight[i] = parameters.add(prefix + names[i] + ".weight", dim * dim, projection_scale);
                block.projection_bias[i] = parameters.add(prefix + names[i] + ".bias", dim, 0.0f);
            }
            block.output_weight = parameters.add(prefix + "out.weight", dim * dim, projection_scale);
            block.output_bias = parameters.add(prefix + "out.bias", dim, 0.0f);
            blocks_.push_back(block);
        }
        head_weight_ = parameters.add("head.weight", static_cast<std::size_t>(options_.classes) * dim,
                                      std::sqrt(3.0f / static_cast<float>(dim)));
        head_bias_ = parameters.add("head.bias", options_.classes, 0.0f);
    }

    void train_micro_batch(const tbdsample::MicroBatch& micro_batch) override {
        TensorScope step_tensors(session_.allocator());
        float* features = nullptr;
        const int* labels = load_input(step_tensors, features);

        // Forward: input projection, then the blocks on the residual stream.
        float* stream_in = step_tensors.allocate<float>(token_values(), Category::activations);
        blas().gemm(false, true, tokens(), dim(), options_.input, features, weight(embed_weight_), stream_in);
        tbdsample::launch_add_bias(stream_in, weight(embed_bias_), tokens(), dim(), stream());
        std::vector<BlockSaved> saved;
        const float* residual = stream_in;
        for (const BlockParameters& block : blocks_) {
            saved.push_back(block_forward(block, residual, step_tensors));
            residual = saved.back().output;
        }

        float* grad_residual = loss_and_head(residual, labels, micro_batch, step_tensors);

        // Backward through the blocks, top first, then the input projection (no input gradient).
        for (std::size_t layer = blocks_.size(); layer-- > 0;)
            grad_residual = block_backward(blocks_[layer], saved[layer], grad_residual, micro_batch, step_tensors);
        tbdsample::GradientTarget grad_embed = micro_batch.gradients.acquire(embed_weight_);
        blas().gemm(true, false, dim(), options_.input, tokens(), grad_residual, features, grad_embed.values,
                    grad_embed.beta);
        tbdsample::GradientTarget grad_embed_bias = micro_batch.gradients.acquire(embed_bias_);
        tbdsample::launch_bias_grad(grad_residual, grad_embed_bias.values, tokens(), dim(), grad_embed_bias.beta,
                                    stream());
        // step_tensors frees the input and every saved activation here.
    }

private:
    int tokens() const { return options_.batch * shape_.seq_len; }
    int dim() const { return options_.hidden; }
    int head_batch() const { return options_.batch * shape_.heads; }  // matrices per batched GEMM
    std::size_t token_values() const { return static_cast<std::size_t>(tokens()) * dim(); }
    std::size_t score_values() const {
        return static_cast<std::size_t>(head_batch()) * shape_.seq_len * shape_.seq_len;
    }
    long long head_stride() const { return static_cast<long long>(shape_.seq_len) * head_dim_; }
    long long score_stride() const { return static_cast<long long>(shape_.seq_len) * shape_.seq_len; }
    float score_scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim_)); }
    cudaStream_t stream() const { return session_.stream(); }
    BlasContext& blas() { return session_.blas(); }
    const float* weight(std::size_t index) const { return session_.parameters()[index].values; }
    float* allocate_activation(std::size_t count) {
        return session_.allocator().allocate_array<float>(count, Category::activations);
    }
    void release(float* tensor) { session_.allocator().release(tensor); }

    const int* load_input(TensorScope& tensors, float*& features) {
        features = tensors.allocate<float>(static_cast<std::size_t>(tokens()) * options_.input, Category::input);
        int* labels = tensors.allocate<int>(options_.batch, Category::input);
        // Sample-major [batch, seq_len * input] is already the token-major [tokens, input] we want.
        data_.next_batch(options_.batch, static_cast<float*>(input_stager_.host_buffer()),
                         static_cast<int*>(label_stager_.host_buffer()));
        input_stager_.copy_to(features);
        label_stager_.copy_to(labels);
        return labels;
    }

    BlockSaved block_forward(const BlockParameters& block, const float* input, TensorScope& tensors) {
        const int seq = shape_.seq_len;
        BlockSaved saved;
        saved.input = input;
        saved.normed = tensors.allocate<float>(token_values(), Category::activations);
        saved.row_mean = tensors.allocate<float>(static_cast<std::size_t>(tokens()), Category::activations);
        saved.row_rstd = tensors.allocate<float>(static_cast<std::size_t>(tokens()), Category::activations);
        attention::launch_layer_norm_forward(input, weight(block.norm_gain), weight(block.norm_bias), saved.normed,
                                             saved.row_mean, saved.row_rstd, tokens(), dim(), stream());

        for (int i = 0; i < 3; ++i) {
            // The token-major projection only exists to be reshaped into heads.
            float* projected = allocate_activation(token_values());
            blas().gemm(false, true, tokens(), dim(), dim(), saved.normed, weight(block.projection_weight[i]),
                        projected);
            tbdsample::launch_add_bias(projected, weight(block.projection_bias[i]), tokens(), dim(), stream());
            saved.per_head[i] = tensors.allocate<float>(token_values(), Category::activations);
            attention::launch_split_heads(projected, saved.per_head[i], options_.batch, seq, shape_.heads,
                                          head_dim_, stream());
            release(projected);
        }
        const float* query = saved.per_head[0];
        const float* key = saved.per_head[1];
        const float* value = saved.per_head[2];

        // scores = Q K^T / sqrt(head_dim); softmax backward needs only P, so the raw scores go at once.
        float* scores = allocate_activation(score_values());
        blas().gemm_strided_batched(false, true, seq, seq, head_dim_, query, head_stride(), key, head_stride(),
                                    scores, score_stride(), head_batch(), 0.0f, score_scale());
        saved.probabilities = tensors.allocate<float>(score_values(), Category::activations);
        attention::launch_softmax_rows(scores, saved.probabilities, head_batch() * seq, seq, stream());
        release(scores);

        float* context_heads = allocate_activation(token_values());
        blas().gemm_strided_batched(false, false, seq, head_dim_, seq, saved.probabilities, score_stride(), value,
                                    head_stride(), context_heads, head_stride(), head_batch(), 0.0f, 1.0f,
                                    BlasContext::BatchedApi::gemm_ex);
        saved.context = tensors.allocate<float>(token_values(), Category::activations);
        attention::launch_merge_heads(context_heads, saved.context, options_.batch, seq, shape_.heads, head_dim_,
                                      stream());
        release(context_heads);

        saved.output = tensors.allocate<float>(token_values(), Category::activations);
        blas().gemm(false, true, tokens(), dim(), dim(), saved.context, weight(block.output_weight), saved.output);
        tbdsample::launch_add_bias(saved.output, weight(block.output_bias), tokens(), dim(), stream());
        tbdsample::launch_add_into(saved.output, input, token_values(), stream());
        return saved;
    }

    // Mean pooling, classifier, loss, and their backward. Returns d(loss)/d(top residual stream).
    float* loss_and_head(const float* top, const int* labels, const tbdsample::MicroBatch& micro_batch,
                         TensorScope& tensors) {
        const int batch = options_.batch;
        const int classes = options_.classes;
        const std::size_t pooled_values = static_cast<std::size_t>(batch) * dim();
        float* pooled = tensors.allocate<float>(pooled_values, Category::activations);
        attention::launch_mean_pool(top, pooled, batch, shape_.seq_len, dim(), stream());
        float* logits = tensors.allocate<float>(static_cast<std::size_t>(batch) * classes, Category::activations);
        blas().gemm(false, true, batch, classes, dim(), pooled, weight(head_weight_), logits);
        tbdsample::launch_add_bias(logits, weight(head_bias_), batch, classes, stream());

        float* grad_logits = tensors.allocate<float>(static_cast<std::size_t>(batch) * classes, Category::activations);
        float* row_loss = session_.allocator().allocate_array<float>(batch, Category::workspace);
        tbdsample::launch_softmax_cross_entropy(logits, labels, row_loss, grad_logits, batch, classes,
                                                micro_batch.loss_scale, stream());
        tbdsample::launch_sum_into(row_loss, batch, micro_batch.loss_scale, micro_batch.loss_total, stream());
        session_.allocator().release(row_loss);

        tbdsample::GradientTarget grad_weight = micro_batch.gradients.acquire(head_weight_);
        blas().gemm(true, false, classes, dim(), batch, grad_logits, pooled, grad_weight.values, grad_weight.beta);
        tbdsample::GradientTarget grad_bias = micro_batch.gradients.acquire(head_bias_);
        tbdsample::launch_bias_grad(grad_logits, grad_bias.values, batch, classes, grad_bias.beta, stream());
        float* grad_pooled = tensors.allocate<float>(pooled_values, Category::activations);
        blas().gemm(false, false, batch, dim(), classes, grad_logits, weight(head_weight_), grad_pooled);
        float* grad_top = tensors.allocate<float>(token_values(), Category::activations);
        attention::launch_mean_pool_backward(grad_pooled, grad_top, batch, shape_.seq_len, dim(), stream());
        return grad_top;
    }

    // Backward of one block, given d(loss)/d(block output). Returns d(loss)/d(block input), which
    // lives in `tensors` (the micro-batch); the block's other activation gradients die with it.
    float* block_backward(const BlockParameters& block, const BlockSaved& saved, const float* grad_output,
                          const tbdsample::MicroBatch& micro_batch, TensorScope& tensors) {
        const int seq = shape_.seq_len;
        TensorScope block_grads(session_.allocator());
        auto activation_grad = [&](std::size_t count) { return block_grads.allocate<float>(count, Category::activations); };

        // Output projection.
        tbdsample::GradientTarget grad_out_weight = micro_batch.gradients.acquire(block.output_weight);
        blas().gemm(true, false, dim(), dim(), tokens(), grad_output, saved.context, grad_out_weight.values,
                    grad_out_weight.beta);
        tbdsample::GradientTarget grad_out_bias = micro_batch.gradients.acquire(block.output_bias);
        tbdsample::launch_bias_grad(grad_output, grad_out_bias.values, tokens(), dim(), grad_out_bias.beta, stream());
        float* grad_context = activation_grad(token_values());
        blas().gemm(false, false, tokens(), dim(), dim(), grad_output, weight(block.output_weight), grad_context);
        float* grad_context_heads = activation_grad(token_values());
        attention::launch_split_heads(grad_context, grad_context_heads, options_.batch, seq, shape_.heads, head_dim_,
                                      stream());

        // context = P V:  dP = dC V^T,  dV = P^T dC.
        const float* query = saved.per_head[0];
        const float* key = saved.per_head[1];
        const float* value = saved.per_head[2];
        std::array<float*, 3> grad_per_head{};
        float* grad_probabilities = activation_grad(score_values());
        blas().gemm_strided_batched(false, true, seq, seq, head_dim_, grad_context_heads, head_stride(), value,
                                    head_stride(), grad_probabilities, score_stride(), head_batch(), 0.0f, 1.0f,
                                    BlasContext::BatchedApi::gemm_ex);
        grad_per_head[2] = activation_grad(token_values());
        blas().gemm_strided_batched(true, false, seq, head_dim_, seq, saved.probabilities, score_stride(),
                                    grad_context_heads, head_stride(), grad_per_head[2], head_stride(), head_batch(),
                                    0.0f, 1.0f, BlasContext::BatchedApi::gemm_ex);

        // Softmax, then scores = scale * Q K^T:  dQ = scale * dS K,  dK = scale * dS^T Q.
        float* grad_scores = activation_grad(score_values());
        attention::launch_softmax_rows_backward(saved.probabilities, grad_probabilities, grad_scores,
                                                head_batch() * seq, seq, stream());
        grad_per_head[0] = activation_grad(token_values());
        blas().gemm_strided_batched(false, false, seq, head_dim_, seq, grad_scores, score_stride(), key,
                                    head_stride(), grad_per_head[0], head_stride(), head_batch(), 0.0f, score_scale());
        grad_per_head[1] = activation_grad(token_values());
        blas().gemm_strided_batched(true, false, seq, head_dim_, seq, grad_scores, score_stride(), query,
                                    head_stride(), grad_per_head[1], head_stride(), head_batch(), 0.0f, score_scale());

        // Q, K, V projections: weight and bias gradients, and the three paths back into Y summed.
        float* grad_normed = activation_grad(token_values());
        for (int i = 0; i < 3; ++i) {
            float* grad_projected = activation_grad(token_values());
            attention::launch_merge_heads(grad_per_head[i], grad_projected, options_.batch, seq, shape_.heads,
                                          head_dim_, stream());
            tbdsample::GradientTarget grad_weight = micro_batch.gradients.acquire(block.projection_weight[i]);
            blas().gemm(true, false, dim(), dim(), tokens(), grad_projected, saved.normed, grad_weight.values,
                        grad_weight.beta);
            tbdsample::GradientTarget grad_bias = micro_batch.gradients.acquire(block.projection_bias[i]);
            tbdsample::launch_bias_grad(grad_projected, grad_bias.values, tokens(), dim(), grad_bias.beta, stream());
            blas().gemm(false, false, tokens(), dim(), dim(), grad_projected, weight(block.projection_weight[i]),
                        grad_normed, i == 0 ? 0.0f : 1.0f);
        }

        // Layer norm, plus the residual path straight from the output.
        tbdsample::GradientTarget grad_gain = micro_batch.gradients.acquire(block.norm_gain);
        tbdsample::GradientTarget grad_shift = micro_batch.gradients.acquire(block.norm_bias);
        attention::launch_layer_norm_backward_params(grad_normed, saved.input, saved.row_mean, saved.row_rstd,
                                                     grad_gain.values, grad_shift.values, grad_gain.beta, tokens(),
                                                     dim(), stream());
        float* grad_input = tensors.allocate<float>(token_values(), Category::activations);
        attention::launch_layer_norm_backward_input(grad_normed, saved.input, saved.row_mean, saved.row_rstd,
                                                    weight(block.norm_gain), grad_input, tokens(), dim(), stream());
        tbdsample::launch_add_into(grad_input, grad_output, token_values(), stream());
        // block_grads frees this block's activation gradients on return.
        return grad_input;
    }

    tbdsample::TrainingSession& session_;
    const tbdsample::CommonOptions& options_;
    AttentionShape shape_;
    int head_dim_;
    tbdsample::SyntheticClassification data_;
    tbdsample::InputStager input_stager_;
    tbdsample::InputStager label_stager_;
    std::size_t embed_weight_ = 0;
    std::size_t embed_bias_ = 0;
    std::vector<BlockParameters> blocks_;
    std::size_t head_weight_ = 0;
    std::size_t head_bias_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    tbdsample::CommonOptions options;
    options.batch = 16;
    options.hidden = 128;
    options.input = 64;
    options.layers = 2;
    AttentionShape shape;
    tbdsample::OptionParser parser(
        "attention_train",
        "Trains a small transformer-style classifier (self-attention with strided-batched cuBLAS GEMMs).");
    tbdsample::add_common_options(parser, options);
    parser.add_alias("model-dim", "hidden");
    parser.add_int("seq-len", &shape.seq_len, 1, 4096, "tokens per sequence");
    parser.add_int("heads", &shape.heads, 1, 1024, "attention heads (must divide the model width)");
    parser.parse(argc, argv);
    if (options.hidden % shape.heads != 0)
        parser.usage_error("--heads " + std::to_string(shape.heads) + " does not divide --model-dim " +
                           std::to_string(options.hidden));

    tbdsample::TrainingSession session("attention_train", options);
    AttentionModel model(session, shape);
    return session.run(model);
}
