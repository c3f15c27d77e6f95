// What a recording on the simulated GPU says about functions the simulator does not model: the
// recorder stores one run note per function the program called (docs/trace-format.md, run_notes),
// and the recorder and the report say the same sentence about it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tbdprof::trace {

class Database;

// run_notes key prefix; the key continues with the function's name, the value is what the program
// got back (a status name such as CUDNN_STATUS_NOT_SUPPORTED, `0`, `NULL`, `nothing`).
inline constexpr std::string_view kNotModelledNotePrefix = "sim_not_modelled.";

struct UnmodelledCall {
    std::string function;
    std::string result;
};

// "the simulated GPU does not model cudnnX: the program saw CUDNN_STATUS_NOT_SUPPORTED".
std::string describe_unmodelled_call(const UnmodelledCall& call);

// The run note of one call, as the recorder stores it.
std::pair<std::string, std::string> unmodelled_call_note(const UnmodelledCall& call);

// The calls a trace's run notes name, in the order stored.
std::vector<UnmodelledCall> read_unmodelled_calls(const Database& db);

}  // namespace tbdprof::trace
