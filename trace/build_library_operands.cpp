#include "build_library_operands.h"

namespace tbdprof::trace::detail {
namespace {

using raw::LibraryOperandRole;

std::string_view role_name(LibraryOperandRole role) {
    switch (role) {
        case LibraryOperandRole::Bias:
            return "bias";
        case LibraryOperandRole::EpilogueAux:
            return "epilogue_aux";
        case LibraryOperandRole::BiasGradient:
            return "bias_gradient";
        case LibraryOperandRole::Scale:
            return "scale";
        case LibraryOperandRole::RunningMean:
            return "running_mean";
        case LibraryOperandRole::RunningVariance:
            return "running_variance";
        case LibraryOperandRole::SavedMean:
            return "saved_mean";
        case LibraryOperandRole::SavedInvVariance:
            return "saved_inv_variance";
        case LibraryOperandRole::ScaleGradient:
            return "scale_gradient";
        case LibraryOperandRole::ShiftGradient:
            return "shift_gradient";
        case LibraryOperandRole::Reserve:
            return "reserve";
        case LibraryOperandRole::Residual:
            return "residual";
        case LibraryOperandRole::HiddenIn:
            return "hidden_in";
        case LibraryOperandRole::CellIn:
            return "cell_in";
        case LibraryOperandRole::HiddenOut:
            return "hidden_out";
        case LibraryOperandRole::CellOut:
            return "cell_out";
        case LibraryOperandRole::Input:
            return "input";
        case LibraryOperandRole::DropoutStates:
            return "dropout_states";
    }
    return "other";
}

std::string_view access_name(raw::OperandAccess access) {
    switch (access) {
        case raw::OperandAccess::Read:
            return "read";
        case raw::OperandAccess::Write:
            return "write";
        default:
            return "read_write";  // unknown directions are taken as both: never less than happened
    }
}

}  // namespace

void add_library_operands(const RawProcess& raw, int64_t process, const LibraryCallKeys& calls,
                          std::vector<LibraryOperandRow>& out) {
    for (const auto& event : raw.library_operands) {
        const raw::RawLibraryOperand& o = event.record;
        auto call = calls.find({event.tid, o.call_begin_host_ns});
        if (call == calls.end() || o.address == 0) continue;
        out.push_back({call->second, process, role_name(o.role), access_name(o.access), static_cast<int64_t>(o.address),
                       o.bytes != 0 ? Opt(static_cast<int64_t>(o.bytes)) : Opt()});
    }
}

}  // namespace tbdprof::trace::detail
