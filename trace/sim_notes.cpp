#include <tbdprof/trace/sim_notes.h>
#include <tbdprof/trace/tables.h>

namespace tbdprof::trace {

std::string describe_unmodelled_call(const UnmodelledCall& call) {
    const std::string head = "the simulated GPU does not model " + call.function;
    if (call.result == "nothing") return head + ": the call did nothing";
    return head + ": the program saw " + call.result;
}

std::pair<std::string, std::string> unmodelled_call_note(const UnmodelledCall& call) {
    return {std::string(kNotModelledNotePrefix) + call.function, call.result};
}

std::vector<UnmodelledCall> read_unmodelled_calls(const Database& db) {
    std::vector<UnmodelledCall> calls;
    if (!has_table(db, "run_notes")) return calls;
    for (auto& [key, value] : read_notes_with_prefix(db, kNotModelledNotePrefix))
        calls.push_back({key.substr(kNotModelledNotePrefix.size()), std::move(value)});
    return calls;
}

}  // namespace tbdprof::trace
