// Internal to tagger/subranges.cpp and tagger/subrange_extents.cpp: the floor of each piece's extent.
#pragma once

#include "subranges.h"

namespace tbdprof::tagger {

// Each piece's farthest own pointer from its start, plus one: the floor of its extent
// (SubRange::reach_bytes); also keeps each use's offset and work (SubRangeSet::use_offset_work).
void record_reach(const TraceModel& m, SubRangeSet& set);

}  // namespace tbdprof::tagger
