// What tbdprof says when a program under --sim asked for NVIDIA's private driver tables, i.e. ran the
// static CUDA runtime: the file the simulated driver named in its mark (`PID<TAB>FILE`) tells whether
// the program itself or a library it loaded carries it (the toolkit's libnccl.so.2 does, for one).
#pragma once

#include <string>

namespace tbdprof::cli {

std::string static_runtime_message(const std::string& mark_path, const std::string& program);

}  // namespace tbdprof::cli
