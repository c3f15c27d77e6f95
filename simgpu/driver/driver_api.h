// Common include of the files that implement the exported driver entry points.
#pragma once

#include "driver_state.h"
#include "timeline.h"

// Entry points keep the names cuda.h gives them (after its _v2 renaming macros) and default
// visibility; the version script exports only cu* names, without a version node, as the real
// libcuda.so.1 does.
#define SIM_API extern "C" __attribute__((visibility("default")))
