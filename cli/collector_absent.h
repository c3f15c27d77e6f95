// A recording in which no process loaded the collector (no raw file in the run directory): the
// command cleared its environment (`env -i`, sudo), is setuid/setgid (the dynamic loader ignores
// LD_PRELOAD then), is statically linked, or never used CUDA. tbdprof said "recorded" with 0
// processes and no reason; now it says which of these it can see, and the rest as likely causes.
#pragma once

#include <string>
#include <vector>

namespace tbdprof::cli {

// Whether some process of the recording wrote a raw file (raw-*.tbdraw) into `run_dir`.
bool collector_wrote(const std::string& run_dir);

// The note for a recording without raw files: `command` as given, `program` its resolved path.
std::string collector_absent_note(const std::vector<std::string>& command, const std::string& program);

}  // namespace tbdprof::cli
