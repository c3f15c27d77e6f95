// The notes of a memory what-if: the assumptions its figures rest on (docs/whatif.md).
#pragma once

#include "tbdprof/analyzer/whatif.h"
#include "whatif_factors.h"

namespace tbdprof::analyzer::whatif {

// The batch, granularity, precision, checkpointing and ZeRO assumptions the options bring in.
void add_assumption_notes(const WhatIfOptions& options, const Model& model, WhatIfResult& result);

}  // namespace tbdprof::analyzer::whatif
