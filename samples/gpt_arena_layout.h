// gpt_arena_train's memory layout: its configuration, the arena allocator that labels tensor by
// tensor, the parameter, activation and scratch tensors, and the synthetic token stream. No kernel
// launches here (samples/host builds the .cu files only).
#pragma once

#include "common/check.h"
#include "common/labels.h"

#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

namespace gpt {

using tbdsample::Category;

enum class Precision { fp32, tf32, bf16 };

struct Config {
    int vocab = 256, max_t = 32, channels = 64, layers = 2, heads = 4;
    int batch = 4, iterations = 8, val_every = 3, ckpt_every = 4, seed = 1;
    bool nvtx_phases = false, gradient_check = false;
    bool reuse_activations = false;  // backward writes gradients over activations it no longer needs
    Precision precision = Precision::fp32;
};

// An arena: one device allocation carved into named tensors, labelled tensor by tensor.
class Arena {
public:
    struct Tensor {
        const char* name;
        size_t bytes;
        Category category;
        size_t offset = 0;
    };
    // `align`: each tensor starts at a multiple of it. Parameter-shaped arenas are packed (1), so that
    // element i is the same parameter in the parameter, gradient, moment and master arenas.
    Arena(tbdsample::LabelWriter& labels, std::vector<Tensor> tensors, size_t align = 16)
        : labels_(labels), tensors_(std::move(tensors)) {
        for (Tensor& t : tensors_) {
            t.offset = bytes_;
            bytes_ += (t.bytes + align - 1) / align * align;
        }
        CUDA_CHECK(cudaMalloc(&base_, bytes_));
        labels_.record_segment(base_, bytes_);
        for (const Tensor& t : tensors_) labels_.record_alloc(base_ + t.offset, t.bytes, t.category);
    }
    ~Arena() {
        for (const Tensor& t : tensors_) labels_.record_free(base_ + t.offset);
        labels_.record_segment_free(base_);
        cudaFree(base_);
    }
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;
    template <typename T>
    T* at(size_t index) const {
        return reinterpret_cast<T*>(base_ + tensors_[index].offset);
    }
    char* base() const { return base_; }
    size_t bytes() const { return bytes_; }

private:
    tbdsample::LabelWriter& labels_;
    std::vector<Tensor> tensors_;
    char* base_ = nullptr;
    size_t bytes_ = 0;
};

// The 16 parameter tensors, in llm.c's order of GPT-2's.
enum Param {
    WTE,
    WPE,
    LN1W,
    LN1B,
    QKVW,
    QKVB,
    ATTPROJW,
    ATTPROJB,
    LN2W,
    LN2B,
    FCW,
    FCB,
    FCPROJW,
    FCPROJB,
    LNFW,
    LNFB,
    NUM_PARAMS
};
const char* const kParamNames[NUM_PARAMS] = {"wte",      "wpe",      "ln1w", "ln1b", "qkvw", "qkvb",
                                             "attprojw", "attprojb", "ln2w", "ln2b", "fcw",  "fcb",
                                             "fcprojw",  "fcprojb",  "lnfw", "lnfb"};

inline std::vector<long> parameter_counts(const Config& c) {
    long C = c.channels, L = c.layers;
    return {c.vocab * C, c.max_t * C, L * C,         L * C,     L * 3 * C * C, L * 3 * C, L * C * C, L * C,
            L * C,       L * C,       L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C,     C,         C};
}

inline std::vector<Arena::Tensor> tensor_list(const std::vector<long>& counts, size_t element, Category category) {
    std::vector<Arena::Tensor> out;
    for (int i = 0; i < NUM_PARAMS; ++i) out.push_back({kParamNames[i], counts[i] * element, category});
    return out;
}

// Activations: index names for the arena's tensors.
enum Act {
    ENCODED,
    LN1,
    LN1_MEAN,
    LN1_RSTD,
    QKV,
    ATTY,
    ATT,
    ATTPROJ,
    RESIDUAL2,
    LN2,
    LN2_MEAN,
    LN2_RSTD,
    FCH,
    FCH_GELU,
    FCPROJ,
    RESIDUAL3,
    LNF,
    LNF_MEAN,
    LNF_RSTD,
    LOGITS,
    LOSSES,
    NUM_ACTS
};
// Activation-gradient scratch, reused by every layer.
enum Scratch { DRESIDUAL, DLN, DATTY, DQKV, DFCH, ROWDOT, NUM_SCRATCH };

// A learnable token stream: mostly next = (5 * current + 3) mod V, sometimes a random restart.
class TokenSource {
public:
    TokenSource(int vocab, unsigned seed) : vocab_(vocab), state_(seed * 2654435761u + 1) {}
    void fill(std::vector<int>& tokens) {
        int current = int(next() % unsigned(vocab_));
        for (int& t : tokens) {
            t = current;
            current = next() % 8 == 0 ? int(next() % unsigned(vocab_)) : (5 * current + 3) % vocab_;
        }
    }
    float uniform() { return float(next() & 0xffffff) / 16777216.0f - 0.5f; }

private:
    unsigned next() { return state_ = state_ * 1664525u + 1013904223u, state_ >> 8; }
    int vocab_;
    unsigned state_;
};

}  // namespace gpt
