// The details pane's text (HTML) for a selected timeline item or allocation.
#pragma once

#include <QString>

#include <vector>

#include "item_details.h"
#include "trace_data.h"

namespace tbdprof::viewer {

class TraceSession;

QString item_details_html(const TraceSession& session, const TimelineRow& row, size_t item);
// What lies in [t0, t1): per row the items overlapping it and their time inside it; the kernel
// names taking the most of that time.
QString range_details_html(const TraceSession& session, double t0_ns, double t1_ns);
QString allocation_details_html(const AllocationInfo& allocation, const std::vector<std::string>& stack);
// A tensor inside a pooled segment: its own size, category, tag and lifetime, then its segment's
// allocation call stack.
QString subrange_details_html(const AllocationInfo& segment, const SubRangeInfo& range,
                              const std::vector<std::string>& stack);

}  // namespace tbdprof::viewer
