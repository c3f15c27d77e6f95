#include "iteration_compare.h"

#include <cmath>
#include <numeric>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::viewer {

TraceIterations trace_iterations_of(const ReportData& data, const QString& label) {
    TraceIterations t;
    t.label = label;
    t.report = &data.report;
    for (const auto& [begin, end] : data.report.iterations.spans) {
        t.seconds.push_back(static_cast<double>(end - begin) / 1e9);
        const RangeExtent e = data.memory.extent(begin, std::max(begin + 1, end));
        t.peak_bytes.push_back(e.max_point == SIZE_MAX ? 0 : e.max);
        t.peak_split.push_back(e.max_point == SIZE_MAX ? analyzer::CategoryBytes{}
                                                       : data.memory.point(e.max_point).bytes);
    }
    return t;
}

std::vector<IterationFigure> iteration_figures(const std::vector<TraceIterations>& traces) {
    using Unit = IterationFigure::Unit;
    std::vector<IterationFigure> figures;
    auto add = [&](QString name, Unit unit, auto value_of) {
        IterationFigure f{std::move(name), unit, {}};
        bool any = false;
        for (const TraceIterations& t : traces) {
            f.values.push_back(value_of(t));
            any = any || f.values.back().has_value();
        }
        if (any) figures.push_back(std::move(f));
    };
    auto has_iterations = [](const TraceIterations& t) { return t.report->iterations.count > 0; };
    add("iterations in the window", Unit::count, [](const TraceIterations& t) -> std::optional<double> {
        return static_cast<double>(t.report->iterations.count);
    });
    add("iteration time, mean", Unit::seconds, [&](const TraceIterations& t) -> std::optional<double> {
        return has_iterations(t) ? std::optional(t.report->iterations.mean_s) : std::nullopt;
    });
    add("iteration time, p95", Unit::seconds, [&](const TraceIterations& t) -> std::optional<double> {
        return has_iterations(t) ? std::optional(t.report->iterations.p95_s) : std::nullopt;
    });
    add("kernels per iteration", Unit::count,
        [](const TraceIterations& t) { return t.report->iterations.kernels_per_iteration; });
    add("kernel time per iteration", Unit::seconds, [](const TraceIterations& t) -> std::optional<double> {
        const auto& ns = t.report->iterations.kernel_time_per_iteration_ns;
        return ns ? std::optional(*ns / 1e9) : std::nullopt;
    });
    add("peak memory", Unit::bytes, [](const TraceIterations& t) -> std::optional<double> {
        return static_cast<double>(t.report->memory.peak_bytes);
    });
    // Beside the split by category: how many reasons make a trace's split unreliable (tag_plausibility.h).
    add("tags: reasons to doubt", Unit::count, [](const TraceIterations& t) -> std::optional<double> {
        if (t.report->memory.tags.verdict == analyzer::TagVerdict::not_checked) return std::nullopt;
        return static_cast<double>(t.report->memory.tags.warnings.size());
    });
    for (int c = 0; c < analyzer::kCategoryCount; ++c) {
        bool present = false;
        for (const TraceIterations& t : traces)
            present = present || t.report->memory.at_peak[static_cast<size_t>(c)] > 0;
        if (!present) continue;
        add(QString("  at peak: %1").arg(QString::fromUtf8(analyzer::category_name(c))), Unit::bytes,
            [c](const TraceIterations& t) -> std::optional<double> {
                return static_cast<double>(t.report->memory.at_peak[static_cast<size_t>(c)]);
            });
    }
    auto mean_peak = [](const TraceIterations& t, int category) -> std::optional<double> {
        if (t.peak_bytes.empty()) return std::nullopt;
        double sum = 0;
        for (size_t i = 0; i < t.peak_bytes.size(); ++i)
            sum += static_cast<double>(category < 0 ? t.peak_bytes[i] : t.peak_split[i][static_cast<size_t>(category)]);
        return sum / static_cast<double>(t.peak_bytes.size());
    };
    add("iteration peak memory, mean", Unit::bytes, [&](const TraceIterations& t) { return mean_peak(t, -1); });
    for (int c = 0; c < analyzer::kCategoryCount; ++c) {
        bool present = false;
        for (const TraceIterations& t : traces)
            for (const analyzer::CategoryBytes& split : t.peak_split)
                present = present || split[static_cast<size_t>(c)] > 0;
        if (!present) continue;
        add(QString("  per iteration: %1").arg(QString::fromUtf8(analyzer::category_name(c))), Unit::bytes,
            [&, c](const TraceIterations& t) { return mean_peak(t, c); });
    }
    return figures;
}

std::optional<double> change_from(std::optional<double> base, std::optional<double> value) {
    if (!base || !value || *base == 0 || !std::isfinite(*value)) return std::nullopt;
    return (*value - *base) / std::fabs(*base);
}

void IterationCompareModel::setTraces(std::vector<TraceIterations> traces) {
    beginResetModel();
    traces_ = std::move(traces);
    figures_ = traces_.size() >= 2 ? iteration_figures(traces_) : std::vector<IterationFigure>{};
    endResetModel();
}

int IterationCompareModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(figures_.size());
}

int IterationCompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() || figures_.empty() ? 0 : 1 + static_cast<int>(traces_.size());
}

QVariant IterationCompareModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const IterationFigure& f = figures_[static_cast<size_t>(index.row())];
    if (index.column() == 0) return role == Qt::DisplayRole ? QVariant(f.name) : QVariant();
    const size_t trace = static_cast<size_t>(index.column() - 1);
    const std::optional<double> value = f.values[trace];
    // NaN: no change to show (the first trace, or a figure missing on either side).
    const double change = trace > 0 ? change_from(f.values[0], value).value_or(std::nan("")) : std::nan("");
    switch (role) {
        case Qt::TextAlignmentRole:
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::UserRole:
            return value ? QVariant(*value) : QVariant();
        case ChangeRole:
            return std::isfinite(change) ? QVariant(change) : QVariant();
        case Qt::DisplayRole: {
            if (!value) return QString("-");
            QString text;
            if (f.unit == IterationFigure::Unit::bytes)
                text = QString::fromStdString(analyzer::format_bytes(static_cast<int64_t>(*value)));
            else if (f.unit == IterationFigure::Unit::seconds)
                text = QString::fromStdString(analyzer::format_duration_ns(*value * 1e9));
            else
                text = QString::number(*value, 'f', *value == std::floor(*value) ? 0 : 1);
            if (std::isfinite(change))
                text += QString(" (%1%2%)").arg(change >= 0 ? "+" : "").arg(change * 100, 0, 'f', 1);
            return text;
        }
        default:
            return {};
    }
}

QVariant IterationCompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == 0) return tr("aligned on iterations");
    return section - 1 < static_cast<int>(traces_.size()) ? QVariant(traces_[static_cast<size_t>(section - 1)].label)
                                                          : QVariant();
}

}  // namespace tbdprof::viewer
