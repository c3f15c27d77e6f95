// Which detected steps train: a training step writes gradients (backward) or rewrites weights (the
// update). A span the program itself named like a step that does neither (a last "step" that only
// runs validation, as llm.c's loop does one more time after the last batch) is set apart.
#pragma once

#include "iterations.h"
#include "model.h"
#include "rules.h"

namespace tbdprof::tagger {

// Moves the iterations in which no work writes a gradient or belongs to the update into
// `iterations.non_training`, when at least half of them do (the run trains; otherwise nothing is
// moved: an inference run, or a trace whose data flow says nothing). True when any was moved; the
// tags must then be computed again over the steps that remain.
bool set_apart_steps_without_training(const TraceModel& model, const TagResult& tags, IterationSet& iterations);

// The converse: a span set apart by the kernel sequence alone (a last step without the work the
// next step would begin with, which the pattern counts as the step's, looks like a forward pass
// after the last step) in which a library call writes a gradient (a weight-gradient GEMM) is a
// training step; moved back into
// `iterations.iterations`. True when any was moved; the tags must then be computed again.
bool count_set_apart_spans_that_train(const TraceModel& model, const TagResult& tags, IterationSet& iterations);

}  // namespace tbdprof::tagger
