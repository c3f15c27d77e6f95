// Several traces aligned on their iterations: per trace, each iteration's time (from the report's
// iteration spans) and memory peak (the analyzer's memory series over that span, with its category
// split), next to the report's per-iteration figures. The Compare view draws the per-iteration
// series on one iteration axis and lists the figures side by side with their change from the first.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <optional>
#include <vector>

#include "trace_data.h"

namespace tbdprof::viewer {

struct TraceIterations {
    QString label;
    std::vector<double> seconds;                      // iteration i's duration, in window order
    std::vector<analyzer::CategoryBytes> peak_split;  // split at iteration i's highest moment
    std::vector<int64_t> peak_bytes;                  // iteration i's highest live bytes
    const analyzer::Report* report = nullptr;
};

TraceIterations trace_iterations_of(const ReportData& data, const QString& label);

// One figure per trace: the value (nullopt: the trace has none) and whether it is bytes, seconds or a count.
struct IterationFigure {
    QString name;
    enum class Unit { seconds, bytes, count } unit = Unit::count;
    std::vector<std::optional<double>> values;  // per trace
};

// The figures compared: iterations, time mean and p95, kernels and kernel time per iteration, peak
// memory and each category at the peak, the mean of the per-iteration peaks and its split.
std::vector<IterationFigure> iteration_figures(const std::vector<TraceIterations>& traces);

// A change of this fraction from the first trace is highlighted.
inline constexpr double kNotableChange = 0.05;

class IterationCompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // The fraction changed from the first trace (the widgets highlight |change| >= kNotableChange).
    static constexpr int ChangeRole = Qt::UserRole + 1;

    explicit IterationCompareModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setTraces(std::vector<TraceIterations> traces);
    const std::vector<TraceIterations>& traces() const { return traces_; }
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<TraceIterations> traces_;
    std::vector<IterationFigure> figures_;
};

// The fraction by which `value` differs from `base`; nullopt when either is missing or base is 0.
std::optional<double> change_from(std::optional<double> base, std::optional<double> value);

}  // namespace tbdprof::viewer
