#include "kernel_stats_model.h"

#include "tbdprof/analyzer/units.h"

namespace tbdprof::viewer {

void KernelStatsModel::setKernels(std::vector<analyzer::KernelStat> kernels) {
    beginResetModel();
    kernels_ = std::move(kernels);
    endResetModel();
}

const analyzer::KernelStat* KernelStatsModel::kernel(int row) const {
    return row >= 0 && row < static_cast<int>(kernels_.size()) ? &kernels_[static_cast<size_t>(row)] : nullptr;
}

int KernelStatsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(kernels_.size());
}

int KernelStatsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelStatsModel::data(const QModelIndex& index, int role) const {
    const analyzer::KernelStat* k = index.isValid() ? kernel(index.row()) : nullptr;
    if (!k || index.column() < 0 || index.column() >= ColumnCount) return {};
    const auto column = static_cast<Column>(index.column());
    if (role == SortRole || role == Qt::DisplayRole) {  // the two show a name and a count alike
        if (column == Name) return QString::fromStdString(k->name);
        if (column == Count) return static_cast<qlonglong>(k->count);
    }
    if (role == SortRole) {
        switch (column) {
            case Total:
                return static_cast<qlonglong>(k->total_ns);
            case Mean:
                return k->mean_ns;
            case Min:
                return static_cast<qlonglong>(k->min_ns);
            case Max:
                return static_cast<qlonglong>(k->max_ns);
            case Share:
                return k->share;
            case Flops:
                return k->flops;
            default:
                return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (column) {
            case Total:
                return QString::fromStdString(analyzer::format_duration_ns(static_cast<double>(k->total_ns)));
            case Mean:
                return QString::fromStdString(analyzer::format_duration_ns(k->mean_ns));
            case Min:
                return QString::fromStdString(analyzer::format_duration_ns(static_cast<double>(k->min_ns)));
            case Max:
                return QString::fromStdString(analyzer::format_duration_ns(static_cast<double>(k->max_ns)));
            case Share:
                return QString::fromStdString(analyzer::format_percent(k->share));
            case Flops:
                return k->flops > 0 ? QString::fromStdString(analyzer::format_flops(k->flops)) : QString("-");
            default:
                return {};
        }
    }
    if (role == Qt::ToolTipRole && column == Name) return QString::fromStdString(k->name);
    if (role == Qt::TextAlignmentRole && column != Name) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant KernelStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* const kHeaders[ColumnCount] = {"kernel", "count", "total",    "mean",
                                                      "min",    "max",   "GPU time", "FLOPs"};
    return section >= 0 && section < ColumnCount ? QVariant(tr(kHeaders[section])) : QVariant();
}

}  // namespace tbdprof::viewer
