// `tbdprof whatif`'s options on a CLI11 option table, shared by `tbdprof check --whatif "OPTIONS"`.
#pragma once

#include <string>

#include <tbdprof/analyzer/whatif.h>

namespace tbdprof::cli {

// The what-if options as `tbdprof whatif` takes them ("--batch-size 64 --batch-size-recorded 32
// --checkpoint sqrt"), split at spaces (no quoting: paths with spaces cannot be given); returns an
// error sentence (empty on success).
std::string parse_whatif_words(const std::string& text, analyzer::WhatIfOptions& options);

}  // namespace tbdprof::cli
