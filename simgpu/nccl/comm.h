// The communicator: one rank's view of a group of ranks meeting in one Rendezvous segment, with the
// per-operation sequence numbers that tell the ranks which operation they are meeting at.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "rendezvous.h"

struct ncclComm {
    tbdsim::nccl::Rendezvous* rendezvous = nullptr;
    std::string name;  // the shared-memory segment, also the communicator's id in the ground truth
    int rank = 0;
    int nranks = 0;
    int device = 0;
    double bus_bytes_per_s = 0;  // the cost model's link bandwidth for this device
    uint64_t collective_seq = 0;
    uint64_t barrier_seq = 0;
    uint64_t split_seq = 0;
    std::vector<uint64_t> send_seq, recv_seq;  // per peer
    bool joined_pending = false;               // initialized inside a group: waits at ncclGroupEnd
};

namespace tbdsim::nccl {

// Maps the segment, counts this rank in (not waiting for the others) and fills the device facts.
ncclResult_t create_comm(const std::string& name, int nranks, int rank, int device, ncclComm** out);
void destroy_comm(ncclComm* comm);
// The segment name of a unique id; false when the bytes are not one of ours.
bool segment_name(const ncclUniqueId& id, std::string* name);

// The calling thread's last error text (ncclGetLastError).
void set_last_error(const std::string& text);

}  // namespace tbdsim::nccl
