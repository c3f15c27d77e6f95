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
// the step touched before `start` (but a set or copy initialising it), that the update touches first
// before that kernel, or at it when the buffer is held from step to step (the previous step's
// kernels writing the weights touched it and nothing else used its bytes since) or was initialised
// in the step, and that the update carries on to the weights: a kernel from `first` on touches it,
// or a later kernel of the update touches it with a buffer the update made that one from `first`
// on touches. SGD with momentum in PyTorch's foreach form: buf *= momentum;
// buf += grad; param -= lr * buf; the last kernel reads the buffers, never the gradients, so only
// the middle one shows that the gradient is the update's input. Foreach Adam: m.lerp_(g) is the
// first kernel of the update and the first to touch m in the step; v.addcmul_(g, g) folds the
// gradient into v, which reaches the weights only through sqrt(v), the closing kernel's operand.
bool read_into_update_state(const Context& c, size_t a, int it, size_t start, size_t first);

}  // namespace tbdprof::tagger::rules
