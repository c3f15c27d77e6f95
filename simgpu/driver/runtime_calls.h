// Runtime API call boundaries (TbdsimPrivateApi::runtime_call_boundary): the simulated runtime says when
// one of its entry points begins and ends, and the listeners (the simulated CUPTI, for its RUNTIME
// activity records) hear it on the same thread. Kept apart from the timeline: no device state involved.
#pragma once

#include <simgpu/private_api.h>

namespace tbdsim::driver {

void runtime_call_boundary(int entering);
int add_runtime_call_listener(TbdsimRuntimeCallListener listener, void* user);

}  // namespace tbdsim::driver
