#include "details_text.h"

#include <algorithm>
#include <map>

#include "tbdprof/analyzer/units.h"
#include "trace_session.h"

namespace tbdprof::viewer {
namespace {

using analyzer::format_bytes;
using analyzer::format_duration_ns;

QString esc(const std::string& text) {
    return QString::fromStdString(text).toHtmlEscaped();
}
QString dur(int64_t ns) {
    return QString::fromStdString(format_duration_ns(static_cast<double>(ns)));
}
QString line(const QString& name, const QString& value) {
    return "<tr><td><b>" + name + "</b></td><td>" + value + "</td></tr>";
}

}  // namespace

QString item_details_html(const TraceSession& session, const TimelineRow& row, size_t item) {
    QString html = "<table cellspacing=3>";
    html += line("row", esc(row.title));
    if (row.kind != RowKind::kernels) {
        html += line("name", esc(row.label_of(item)));
        html += line("start", dur(row.items.start(item)));
        html += line("duration", dur(row.items.duration(item)));
        return html + "</table>";
    }
    const KernelInfo k = session.kernelInfo(row.items.id(item));
    if (!k.found) {
        html += line("name", esc(row.label_of(item)));
        html += line("duration", dur(row.items.duration(item)));
        return html + line("", "(details not readable from the trace)") + "</table>";
    }
    html += line("kernel", esc(k.name));
    if (k.mangled != k.name) html += line("mangled", "<small>" + esc(k.mangled) + "</small>");
    html += line("start", dur(k.start_ns));
    html += line("duration", dur(k.duration_ns));
    if (k.queued_ns) html += line("queue delay", dur(*k.queued_ns));
    html += line("grid", QString("%1 × %2 × %3").arg(k.grid[0]).arg(k.grid[1]).arg(k.grid[2]));
    html += line("block", QString("%1 × %2 × %3").arg(k.block[0]).arg(k.block[1]).arg(k.block[2]));
    html += line("shared memory", QString::fromStdString(format_bytes(k.shared_bytes)));
    if (k.graph_launch) html += line("graph replay", QString("launch %1").arg(*k.graph_launch));
    if (k.library_call) {
        const LibraryCallInfo& c = *k.library_call;
        html +=
            line("library call",
                 esc(c.name) +
                     QString(" (%1: m=%2 n=%3 k=%4, batch %5)").arg(esc(c.op)).arg(c.m).arg(c.n).arg(c.k).arg(c.batch));
        html += line("FLOPs", c.flops > 0 ? QString::fromStdString(analyzer::format_flops(c.flops)) +
                                                (c.kernels > 1 ? QString(" for the call's %1 kernels").arg(c.kernels)
                                                               : QString())
                                          : QString("not recorded"));
    } else {
        html += line("FLOPs", "no library call: not known");
    }
    html += "</table>";
    if (!k.arguments.empty()) {
        html +=
            "<p><b>Arguments pointing into allocations</b></p><table "
            "cellspacing=3><tr><th>param</th><th>allocation</th>"
            "<th>size</th><th>category</th><th>offset</th><th></th></tr>";
        for (const KernelArgument& a : k.arguments) {
            html += QString("<tr><td>%1</td><td>#%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td></tr>")
                        .arg(a.param)
                        .arg(a.allocation)
                        .arg(QString::fromStdString(format_bytes(a.bytes)))
                        .arg(a.category.empty() ? QString("untagged") : esc(a.category))
                        .arg(a.offset)
                        .arg(a.read_only ? "read" : "");
        }
        html += "</table>";
    }
    return html;
}

QString range_details_html(const TraceSession& session, double t0_ns, double t1_ns) {
    const int64_t t0 = static_cast<int64_t>(t0_ns), t1 = std::max(t0 + 1, static_cast<int64_t>(t1_ns));
    QString html = QString(
                       "<p><b>Range</b> %1 – %2 (%3)</p><table cellspacing=3><tr><th>row</th><th>items</th>"
                       "<th>time inside</th></tr>")
                       .arg(dur(t0), dur(t1), dur(t1 - t0));
    std::map<std::string, int64_t> kernel_time;
    for (const TimelineRow* row : session.rows()) {
        const ItemRow& items = row->items;
        int64_t count = 0, inside = 0;
        const size_t last = items.first_starting_at(t1);
        for (size_t i = items.first_overlapping(t0); i < last; ++i) {
            const int64_t part = std::min(items.end(i), t1) - std::max(items.start(i), t0);
            if (part < 0 || (part == 0 && items.duration(i) > 0)) continue;
            ++count;
            inside += part;
            if (row->kind == RowKind::kernels) kernel_time[row->label_of(i)] += part;
        }
        if (count == 0) continue;
        html += QString("<tr><td>%1</td><td align=right>%2</td><td align=right>%3</td></tr>")
                    .arg(esc(row->title))
                    .arg(count)
                    .arg(dur(inside));
    }
    html += "</table>";
    if (!kernel_time.empty()) {
        std::vector<std::pair<int64_t, std::string>> ranked;
        for (const auto& [name, ns] : kernel_time) ranked.emplace_back(ns, name);
        std::sort(ranked.rbegin(), ranked.rend());
        html += "<p><b>Kernels taking the most of it</b></p><table cellspacing=3>";
        for (size_t i = 0; i < std::min<size_t>(8, ranked.size()); ++i) {
            html +=
                QString("<tr><td align=right>%1</td><td>%2</td></tr>").arg(dur(ranked[i].first), esc(ranked[i].second));
        }
        html += "</table>";
    }
    return html;
}

namespace {

QString stack_html(const std::vector<std::string>& stack, const QString& of = QString()) {
    QString html = "<p><b>Call stack</b>" + (of.isEmpty() ? QString() : " of " + of) + " (innermost first)</p>";
    if (stack.empty()) return html + "<p>not recorded (stacks off)</p>";
    html += "<pre>";
    for (const std::string& frame : stack) html += esc(frame) + "\n";
    return html + "</pre>";
}

}  // namespace

QString allocation_details_html(const AllocationInfo& a, const std::vector<std::string>& stack) {
    QString html = "<table cellspacing=3>";
    html += line("allocation", QString("#%1 on GPU %2 (%3)").arg(a.id).arg(a.device).arg(esc(a.kind)));
    html += line("size", QString::fromStdString(format_bytes(a.bytes)));
    html += line("category", QString::fromUtf8(analyzer::category_name(a.category)));
    if (!a.rule.empty()) html += line("rule", esc(a.rule));
    if (!a.reason.empty()) html += line("reason", esc(a.reason));
    if (a.confidence >= 0) html += line("confidence", QString::number(a.confidence, 'f', 2));
    html +=
        line("lifetime", dur(a.alloc_ns) + " – " + (a.free_ns == INT64_MAX ? QString("end of run") : dur(a.free_ns)));
    return html + "</table>" + stack_html(stack);
}

QString subrange_details_html(const AllocationInfo& segment, const SubRangeInfo& r,
                              const std::vector<std::string>& stack) {
    QString html = "<table cellspacing=3>";
    html += line("tensor", QString("sub-range #%1 at offset %2 of segment #%3 (%4, GPU %5)")
                               .arg(r.id)
                               .arg(QString::fromStdString(format_bytes(r.offset)))
                               .arg(segment.id)
                               .arg(QString::fromStdString(format_bytes(segment.bytes)))
                               .arg(segment.device));
    html += line("size", QString::fromStdString(format_bytes(r.bytes)));
    html += line("category", QString::fromUtf8(analyzer::category_name(r.category)));
    if (!r.rule.empty()) html += line("rule", esc(r.rule));
    if (!r.reason.empty()) html += line("reason", esc(r.reason));
    if (r.confidence >= 0) html += line("confidence", QString::number(r.confidence, 'f', 2));
    html += line("lifetime", dur(r.begin_ns) + " – " + dur(r.end_ns) + " (first to last use)");
    html += line("duration", dur(r.end_ns - r.begin_ns));
    return html + "</table>" + stack_html(stack, QStringLiteral("the segment's allocation"));
}

}  // namespace tbdprof::viewer
