// Report -> Document (shared by text, markdown and HTML).
#pragma once

#include "document.h"
#include "tbdprof/analyzer/report.h"

namespace tbdprof::analyzer {

Document report_document(const Report& report, bool with_charts);
std::string window_sentence(const Report& report);

}  // namespace tbdprof::analyzer
