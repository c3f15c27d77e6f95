// The report's figures as a flat list (section, name, value as the CLI prints it, raw number), for
// the Summary table and the Compare table. Nothing is computed here: every value is a Report field.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::viewer {

struct ReportFact {
    std::string section, name, text;
    std::optional<double> value;  // for differences in Compare; unset for text-only facts
    bool bytes = false;           // value is a size (differences print as sizes)
};

std::vector<ReportFact> report_facts(const analyzer::Report& report);

}  // namespace tbdprof::viewer
