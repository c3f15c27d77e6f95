// Tells the user, once per function, that a program called an exported function the simulated GPU
// does not model (a generated stub), and leaves the same fact where tbdprof finds it after the run.
// Compiled into every simulated library (tbd_simgpu_library); hidden, so each library has its own.
//
// The contract with readers (docs/simgpu.md, "Unmodelled functions"):
//   stderr: `tbdsim: not modelled: NAME (returned RESULT)`, one line per function and process;
//   TBDSIM_NOT_MODELLED=PATH: one line `PID<TAB>NAME<TAB>RESULT` appended per function and process.
// RESULT is what the caller got: the library's status name (CUDNN_STATUS_NOT_SUPPORTED), `0`,
// `NULL`, `nothing` (void) or `a placeholder text` (strings).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("hidden"))) void tbdsim_not_modelled(const char* function, const char* result);

#ifdef __cplusplus
}
#endif
