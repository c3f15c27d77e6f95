// Which per-step buffers the update takes as inputs although its closing kernels (those that write
// the weights) never point at them: what an earlier kernel of the update folds into its own state.
// Internal to the tagger (rules.cpp, update_step_local).
#pragma once

#include "rules_context.h"

#include <cstddef>

namespace tbdprof::tagger::rules {

// Whether every touch of buffer `a` in step `it` between `start` (the update's first kernel, as
// tried) and `first` (its first kernel that writes a weight) is by a kernel that also touches the
// update's own state, and there is at least one. State is a buffer, not a weight, that no work of
// the step touched before `start`, that the update touched before that kernel, and that a kernel
// from `first` on touches again: written only by the update, read only by the update. SGD with
// momentum in PyTorch's foreach form is the case: buf *= momentum; buf += grad; param -= lr * buf.
// The last kernel reads the buffers, never the gradients, so only the middle one shows that the
// gradient is the update's input.
bool read_into_update_state(const Context& c, size_t a, int it, size_t start, size_t first);

}  // namespace tbdprof::tagger::rules
