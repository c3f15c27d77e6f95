// Report -> Document (shared by text, markdown and HTML).
#pragma once

#include "document.h"
#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

// full_names: whole kernel names and every frame of call stacks (text fits them to its width itself).
Document report_document(const Report& report, bool with_charts, bool full_names);
std::string window_sentence(const Report& report);
// communication_section.cpp; only for a report whose communication is present.
Section communication_section(const Report& report);
// communication_buckets_render.cpp; only for a report with gradient buckets.
Section bucket_section(const Report& report);

}  // namespace tbdprof::analyzer
