#pragma once

namespace tbdsim::testing {
// How many times libcublas called one of the interposed driver symbols directly (must stay 0).
int driver_calls_by_symbol_from_cublas();
}  // namespace tbdsim::testing
