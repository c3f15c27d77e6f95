// Ranks of a data-parallel sample: where a process learns its rank (the launcher's environment, as
// torchrun and mpirun set it) and the small launcher that starts one process per rank, torchrun-style.
#pragma once

#include <nccl.h>

#include <optional>
#include <string>

namespace tbdsample {

struct RankInfo {
    int rank = 0;
    int local_rank = 0;
    int world_size = 1;
};

// From RANK/LOCAL_RANK/WORLD_SIZE, else OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE; none when neither is
// set. A malformed value is fatal (status 2).
std::optional<RankInfo> rank_from_environment();

// Starts `world_size` copies of this program (/proc/self/exe with the same arguments), each with
// RANK, LOCAL_RANK and WORLD_SIZE set and the communicator's unique id in TBD_NCCL_UNIQUE_ID; waits
// for all; returns 0 when every rank succeeded, else the first failing rank's status. Rank k > 0
// writes its labels to TBD_SAMPLE_LABELS with ".rank<k>" appended (rank 0 to the file itself).
int launch_ranks(int world_size, char** argv);

// The unique id the launcher handed down (fatal when missing or malformed).
ncclUniqueId unique_id_from_environment();

}  // namespace tbdsample
