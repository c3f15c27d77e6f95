// Framework presets (`--framework=NAME`): environment variables that make a framework's caching
// allocator hand each tensor to CUDA on its own, so the collector sees tensors, not pool segments.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tbdprof::cli {

struct FrameworkPreset {
    std::string name;  // pytorch, tensorflow, jax, mxnet; empty for none
    std::vector<std::pair<std::string, std::string>> environment;
    std::string cost;  // what the setting costs the program, for the record summary and docs
};

// `requested` is pytorch|tensorflow|jax|mxnet|auto|none. `auto` looks at the command line: the
// words themselves (torchrun, a module name after -m) and the imports at the top of a Python script.
// Returns false for an unknown name.
bool resolve_framework(const std::string& requested, const std::vector<std::string>& command, FrameworkPreset& out);

// True when the command runs PyTorch, as `auto` would guess it (whatever --framework says).
bool runs_pytorch(const std::vector<std::string>& command);

// Names accepted by --framework, for messages.
const char* framework_names();

}  // namespace tbdprof::cli
