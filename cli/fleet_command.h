// `tbdprof fleet TRACE...`: many ranks' traces analysed on a Dask cluster by tbdprof-fleet (a Python
// program, fleet/), found next to the tbdprof executable like the viewer. Every argument is passed on.
#pragma once

namespace tbdprof::cli {

int fleet_command(int argc, char** argv);  // argv[0] is "fleet"

}  // namespace tbdprof::cli
