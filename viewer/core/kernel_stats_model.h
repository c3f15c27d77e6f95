// The Kernels view's table: the report's kernels aggregated by name (count, total, mean, min, max,
// share of GPU time, FLOPs). Display text is formatted like the CLI's; SortRole gives raw numbers.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "tbdprof/analyzer/report.h"

namespace tbdprof::viewer {

class KernelStatsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Count, Total, Mean, Min, Max, Share, Flops, ColumnCount };
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit KernelStatsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setKernels(std::vector<analyzer::KernelStat> kernels);
    const analyzer::KernelStat* kernel(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<analyzer::KernelStat> kernels_;
};

}  // namespace tbdprof::viewer
