// lstm_train: trains a stacked LSTM sequence classifier on synthetic data, unrolled over time.
//
// Each micro-batch: a [seq_len, batch, input] sequence and its labels are copied host->device.
// Forward, per layer and time step: two cuBLAS SGEMMs (x_t W_ih^T, then h_{t-1} W_hh^T added in) and
// one cell kernel (bias, gate nonlinearities, new c and h). A linear layer on the last hidden state
// gives the logits; softmax/cross-entropy gives the loss. Backward is backpropagation through time:
// per layer from the top, per step from the last, a cell-backward kernel and SGEMMs for the gradients
// of W_ih, W_hh, the recurrent state and the layer input, plus a bias-gradient reduction.
//
// Memory: unlike the MLP, activations are allocated per time step (gates, c and h of every step of
// every layer are kept for BPTT), so the activation footprint grows through forward with seq_len
// and is released at the end of the micro-batch.
#include "common/check.h"
#include "common/kernels.h"
#include "common/options.h"
#include "common/synthetic_data.h"
#include "common/training.h"
#include "lstm_kernels.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace {

using tbdsample::Category;

class LstmModel final : public tbdsample::TrainingModel {
public:
    LstmModel(tbdsample::TrainingSession& session, int seq_len)
        : session_(session), options_(session.options()), seq_len_(seq_len),
          data_(seq_len * options_.input, options_.classes, options_.seed),
          sample_major_(static_cast<std::size_t>(options_.batch) * seq_len * options_.input),
          input_stager_(sizeof(float) * sample_major_.size(), session.stream()),
          label_stager_(sizeof(int) * options_.batch, session.stream()) {
        const int hidden = options_.hidden;
        const float scale = 1.0f / std::sqrt(static_cast<float>(hidden));
        tbdsample::ParameterSet& parameters = session.parameters();
        for (int layer = 0; layer < options_.layers; ++layer) {
            std::string prefix = "lstm" + std::to_string(layer) + ".";
            std::size_t gate_rows = 4 * static_cast<std::size_t>(hidden);
            w_ih_.push_back(parameters.add(prefix + "weight_ih", gate_rows * layer_input_width(layer), scale));
            w_hh_.push_back(parameters.add(prefix + "weight_hh", gate_rows * hidden, scale));
            bias_.push_back(parameters.add(prefix + "bias", gate_rows, scale));
        }
        w_out_ = parameters.add("fc.weight", static_cast<std::size_t>(options_.classes) * hidden, scale);
        b_out_ = parameters.add("fc.bias", options_.classes, 0.0f);
    }

    void train_micro_batch(const tbdsample::MicroBatch& micro_batch) override {
        tbdsample::TensorScope step_tensors(session_.allocator());
        const Sequence input = load_input(step_tensors);
        std::vector<LayerStates> states = forward(input, step_tensors);
        float* grad_last_hidden = loss_and_head_backward(states.back().h.back(), input.labels,
                                                         micro_batch, step_tensors);
        backward_through_time(input, states, grad_last_hidden, micro_batch, step_tensors);
        // step_tensors frees the input and every per-step activation here.
    }

private:
    struct Sequence {
        std::vector<const float*> x;  // x[t]: [batch, input], slices of one [seq_len, batch, input] buffer
        const int* labels;
    };
    // What BPTT needs from the forward pass of one layer, one entry per time step.
    struct LayerStates {
        std::vector<float*> gates;  // activated gates [batch, 4 * hidden]
        std::vector<float*> c;      // cell state [batch, hidden]
        std::vector<float*> h;      // hidden state [batch, hidden]
    };

    int layer_input_width(int layer) const { return layer == 0 ? options_.input : options_.hidden; }
    std::size_t rows(int width) const { return static_cast<std::size_t>(options_.batch) * width; }

    Sequence load_input(tbdsample::TensorScope& tensors) {
        const int batch = options_.batch;
        const int input = options_.input;
        float* sequence = tensors.allocate<float>(sample_major_.size(), Category::input);
        int* labels = tensors.allocate<int>(batch, Category::input);
        // The generator writes sample-major [batch, seq_len, input]; the GEMMs want time-major.
        data_.next_batch(batch, sample_major_.data(), static_cast<int*>(label_stager_.host_buffer()));
        auto* time_major = static_cast<float*>(input_stager_.host_buffer());
        for (int sample = 0; sample < batch; ++sample)
            for (int t = 0; t < seq_len_; ++t)
                for (int f = 0; f < input; ++f)
                    time_major[(static_cast<std::size_t>(t) * batch + sample) * input + f] =
                        sample_major_[(static_cast<std::size_t>(sample) * seq_len_ + t) * input + f];
        input_stager_.copy_to(sequence);
        label_stager_.copy_to(labels);
        Sequence result{{}, labels};
        for (int t = 0; t < seq_len_; ++t) result.x.push_back(sequence + static_cast<std::size_t>(t) * rows(input));
        return result;
    }

    std::vector<LayerStates> forward(const Sequence& input, tbdsample::TensorScope& tensors) {
        const int batch = options_.batch;
        const int hidden = options_.hidden;
        cudaStream_t stream = session_.stream();
        const tbdsample::ParameterSet& parameters = session_.parameters();
        // h_{-1} = c_{-1} = 0 for every layer: one zero buffer, only ever read.
        zero_state_ = tensors.allocate<float>(rows(hidden), Category::activations);
        CUDA_CHECK(cudaMemsetAsync(zero_state_, 0, rows(hidden) * sizeof(float), stream));

        std::vector<LayerStates> states(static_cast<std::size_t>(options_.layers));
        for (int layer = 0; layer < options_.layers; ++layer) {
            LayerStates& state = states[static_cast<std::size_t>(layer)];
            for (int t = 0; t < seq_len_; ++t) {
                const float* x = layer == 0 ? input.x[t] : states[static_cast<std::size_t>(layer) - 1].h[t];
                const float* h_prev = t == 0 ? zero_state_ : state.h.back();
                const float* c_prev = t == 0 ? zero_state_ : state.c.back();
                float* gates = tensors.allocate<float>(rows(4 * hidden), Category::activations);
                float* c = tensors.allocate<float>(rows(hidden), Category::activations);
                float* h = tensors.allocate<float>(rows(hidden), Category::activations);
                session_.blas().gemm(false, true, batch, 4 * hidden, layer_input_width(layer), x,
                                     parameters[w_ih_[layer]].values, gates);
                session_.blas().gemm(false, true, batch, 4 * hidden, hidden, h_prev,
                                     parameters[w_hh_[layer]].values, gates, 1.0f);
                lstm::launch_cell_forward(gates, parameters[bias_[layer]].values, c_prev, c, h, batch,
                                          hidden, stream);
                state.gates.push_back(gates);
                state.c.push_back(c);
                state.h.push_back(h);
            }
        }
        return states;
    }

    // Classifier on the last hidden state of the top layer, the loss, and the classifier's backward.
    // Returns d(loss)/d(last hidden state).
    float* loss_and_head_backward(const float* last_hidden, const int* labels,
                                  const tbdsample::MicroBatch& micro_batch, tbdsample::TensorScope& tensors) {
        const int batch = options_.batch;
        const int hidden = options_.hidden;
        const int classes = options_.classes;
        cudaStream_t stream = session_.stream();
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::BlasContext& blas = session_.blas();

        float* logits = tensors.allocate<float>(rows(classes), Category::activations);
        blas.gemm(false, true, batch, classes, hidden, last_hidden, parameters[w_out_].values, logits);
        tbdsample::launch_add_bias(logits, parameters[b_out_].values, batch, classes, stream);
        float* grad_logits = tensors.allocate<float>(rows(classes), Category::activations);
        float* row_loss = session_.allocator().allocate_array<float>(batch, Category::workspace);
        tbdsample::launch_softmax_cross_entropy(logits, labels, row_loss, grad_logits, batch, classes,
                                                micro_batch.loss_scale, stream);
        tbdsample::launch_sum_into(row_loss, batch, micro_batch.loss_scale, micro_batch.loss_total, stream);
        session_.allocator().release(row_loss);

        tbdsample::GradientTarget weight_grad = micro_batch.gradients.acquire(w_out_);
        blas.gemm(true, false, classes, hidden, batch, grad_logits, last_hidden, weight_grad.values, weight_grad.beta);
        tbdsample::GradientTarget bias_grad = micro_batch.gradients.acquire(b_out_);
        tbdsample::launch_bias_grad(grad_logits, bias_grad.values, batch, classes, bias_grad.beta, stream);
        float* grad_hidden = tensors.allocate<float>(rows(hidden), Category::activations);
        blas.gemm(false, false, batch, hidden, classes, grad_logits, parameters[w_out_].values, grad_hidden);
        return grad_hidden;
    }

    void backward_through_time(const Sequence& input, const std::vector<LayerStates>& states,
                               float* grad_last_hidden, const tbdsample::MicroBatch& micro_batch,
                               tbdsample::TensorScope& tensors) {
        const int batch = options_.batch;
        const int hidden = options_.hidden;
        cudaStream_t stream = session_.stream();
        const tbdsample::ParameterSet& parameters = session_.parameters();
        tbdsample::BlasContext& blas = session_.blas();

        // grad_from_above[t]: d(loss)/d(h_t) coming from the layer above (or the classifier).
        std::vector<const float*> grad_from_above(static_cast<std::size_t>(seq_len_), nullptr);
        grad_from_above.back() = grad_last_hidden;
        for (int layer = options_.layers - 1; layer >= 0; --layer) {
            const LayerStates& state = states[static_cast<std::size_t>(layer)];
            const int in = layer_input_width(layer);
            float* dh_recurrent = tensors.allocate<float>(rows(hidden), Category::activations);
            float* dc_running = tensors.allocate<float>(rows(hidden), Category::activations);
            CUDA_CHECK(cudaMemsetAsync(dh_recurrent, 0, rows(hidden) * sizeof(float), stream));
            CUDA_CHECK(cudaMemsetAsync(dc_running, 0, rows(hidden) * sizeof(float), stream));
            std::vector<const float*> grad_to_below(static_cast<std::size_t>(seq_len_), nullptr);
            for (int t = seq_len_ - 1; t >= 0; --t) {
                const float* c_prev = t == 0 ? zero_state_ : state.c[t - 1];
                const float* h_prev = t == 0 ? zero_state_ : state.h[t - 1];
                const float* x = layer == 0 ? input.x[t] : states[static_cast<std::size_t>(layer) - 1].h[t];
                float* grad_gates = tensors.allocate<float>(rows(4 * hidden), Category::activations);
                lstm::launch_cell_backward(state.gates[t], state.c[t], c_prev, dh_recurrent, grad_from_above[t],
                                           dc_running, grad_gates, batch, hidden, stream);
                tbdsample::GradientTarget grad_ih = micro_batch.gradients.acquire(w_ih_[layer]);
                blas.gemm(true, false, 4 * hidden, in, batch, grad_gates, x, grad_ih.values, grad_ih.beta);
                tbdsample::GradientTarget grad_hh = micro_batch.gradients.acquire(w_hh_[layer]);
                blas.gemm(true, false, 4 * hidden, hidden, batch, grad_gates, h_prev, grad_hh.values, grad_hh.beta);
                tbdsample::GradientTarget grad_bias = micro_batch.gradients.acquire(bias_[layer]);
                tbdsample::launch_bias_grad(grad_gates, grad_bias.values, batch, 4 * hidden, grad_bias.beta, stream);
                // d(loss)/d(h_{t-1}) through the recurrence; overwrites what the cell kernel just read
                // (same stream, so ordered after it).
                blas.gemm(false, false, batch, hidden, 4 * hidden, grad_gates, parameters[w_hh_[layer]].values,
                          dh_recurrent);
                if (layer > 0) {
                    float* grad_x = tensors.allocate<float>(rows(in), Category::activations);
                    blas.gemm(false, false, batch, in, 4 * hidden, grad_gates, parameters[w_ih_[layer]].values, grad_x);
                    grad_to_below[static_cast<std::size_t>(t)] = grad_x;
                }
            }
            grad_from_above = grad_to_below;
        }
    }

    tbdsample::TrainingSession& session_;
    const tbdsample::CommonOptions& options_;
    int seq_len_;
    tbdsample::SyntheticClassification data_;
    std::vector<float> sample_major_;  // host scratch of one batch, before reordering to time-major
    tbdsample::InputStager input_stager_;
    tbdsample::InputStager label_stager_;
    float* zero_state_ = nullptr;      // per micro-batch, owned by its TensorScope
    std::vector<std::size_t> w_ih_;
    std::vector<std::size_t> w_hh_;
    std::vector<std::size_t> bias_;
    std::size_t w_out_ = 0;
    std::size_t b_out_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    tbdsample::CommonOptions options;
    options.batch = 32;
    options.hidden = 256;
    options.input = 64;
    options.layers = 2;
    int seq_len = 16;
    tbdsample::OptionParser parser("lstm_train",
                                   "Trains a stacked LSTM sequence classifier (cuBLAS SGEMM per time step, BPTT).");
    tbdsample::add_common_options(parser, options);
    parser.add_int("seq-len", &seq_len, 1, 4096, "time steps the LSTM is unrolled over");
    parser.parse(argc, argv);

    tbdsample::TrainingSession session("lstm_train", options);
    LstmModel model(session, seq_len);
    return session.run(model);
}
