// How the product tells the simulated GPU from a real one, the one thing of the simulator it may
// know: the simulated driver answers cuGetExportTable() for this table id, which no real driver
// knows. The simulated libraries reach their private interface by the same id
// (simgpu/include/simgpu/private_api.h).
#pragma once

#include <cuda.h>

static const CUuuid TBDPROF_SIMULATED_DRIVER_TABLE_ID = {
    {'t', 'b', 'd', 's', 'i', 'm', '.', 'p', 'r', 'i', 'v', 'a', 't', 'e', '.', '1'}};
