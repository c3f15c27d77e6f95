#include <tbdprof/trace/sim_notes.h>
#include <tbdprof/trace/tables.h>

namespace tbdprof::trace {

namespace {

// What a hole means for the program, where the function name says it plainly: run-time compilation
// has no compiler behind it on the simulated GPU, so the code it would build can never run there.
std::string consequence(const std::string& function) {
    if (function.starts_with("nvrtc"))
        return "; the program compiles GPU code at run time with NVRTC (PyTorch's jiterator kernels, "
               "torch.cuda.jiterator, CuPy raw kernels), which the simulated GPU cannot do: record it on a real GPU";
    if (function.starts_with("nvJitLink"))
        return "; the program links GPU code at run time with nvJitLink, which the simulated GPU cannot do: "
               "record it on a real GPU";
    return {};
}

}  // namespace

std::string describe_unmodelled_call(const UnmodelledCall& call) {
    const std::string head = "the simulated GPU does not model " + call.function;
    if (call.result == "nothing") return head + ": the call did nothing" + consequence(call.function);
    return head + ": the program saw " + call.result + consequence(call.function);
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
