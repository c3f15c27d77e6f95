// The details pane's text (HTML) for a selected timeline item or allocation.
#pragma once

#include <QString>

#include <vector>

#include "item_details.h"
#include "trace_data.h"

namespace tbdprof::viewer {

class TraceSession;

QString item_details_html(const TraceSession& session, const TimelineRow& row, size_t item);
QString allocation_details_html(const AllocationInfo& allocation, const std::vector<std::string>& stack);

}  // namespace tbdprof::viewer
