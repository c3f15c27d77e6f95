// The short summary tbdprof prints after a recording (also what scripts/demo.sh shows).
#pragma once

#include <tbdprof/trace/trace_reader.h>

#include <string>

namespace tbdprof::cli {

std::string format_bytes(int64_t bytes);
std::string format_summary(const trace::TraceSummary& summary, const std::string& trace_path);

}  // namespace tbdprof::cli
