#include "facts_models.h"

#include <cmath>
#include <map>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::viewer {

void SummaryModel::setReport(const analyzer::Report* report) {
    beginResetModel();
    facts_ = report ? report_facts(*report) : std::vector<ReportFact>{};
    endResetModel();
}

int SummaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(facts_.size());
}
int SummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 3;
}

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(facts_.size()) || index.column() > 2) return {};
    const ReportFact& fact = facts_[static_cast<size_t>(index.row())];
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    const std::string& text = index.column() == 0 ? fact.section : index.column() == 1 ? fact.name : fact.text;
    return QString::fromStdString(text);
}

QVariant SummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* const kHeaders[] = {"section", "metric", "value"};
    return section >= 0 && section < 3 ? QVariant(tr(kHeaders[section])) : QVariant();
}

void CompareModel::setReports(const std::vector<const analyzer::Report*>& reports, const QStringList& labels) {
    beginResetModel();
    rows_.clear();
    cells_.clear();
    columns_.clear();
    labels_ = labels;
    for (const analyzer::Report* report : reports) columns_.push_back(report_facts(*report));
    std::map<std::pair<std::string, std::string>, size_t> row_of;
    for (size_t t = 0; t < columns_.size(); ++t) {
        for (const ReportFact& fact : columns_[t]) {
            if (fact.section == "notes") continue;  // notes differ in wording, not in value
            auto [it, inserted] = row_of.emplace(std::make_pair(fact.section, fact.name), rows_.size());
            if (inserted) {
                rows_.push_back({fact.section, fact.name, fact.bytes});
                cells_.emplace_back(columns_.size(), nullptr);
            }
            cells_[it->second][t] = &fact;
        }
    }
    endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int CompareModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 1 + static_cast<int>(columns_.size());
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size()) || index.column() >= columnCount()) return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    if (index.column() == 0) {
        return role == Qt::DisplayRole ? QVariant(QString::fromStdString(row.section + ": " + row.name)) : QVariant();
    }
    const size_t trace = static_cast<size_t>(index.column() - 1);
    const ReportFact* fact = cells_[static_cast<size_t>(index.row())][trace];
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::UserRole) return fact && fact->value ? QVariant(*fact->value) : QVariant();
    if (role != Qt::DisplayRole) return {};
    if (!fact) return QString("-");
    QString text = QString::fromStdString(fact->text);
    const ReportFact* base = cells_[static_cast<size_t>(index.row())][0];
    // Later traces also say how far they are from the first, as `tbdprof compare` does.
    if (trace > 0 && base && base->value && fact->value && *base->value != 0 && std::isfinite(*fact->value)) {
        const double change = (*fact->value - *base->value) / std::fabs(*base->value);
        text += QString(" (%1%2%)").arg(change >= 0 ? "+" : "").arg(change * 100, 0, 'f', 1);
    }
    return text;
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section == 0) return tr("metric");
    return section - 1 < labels_.size() ? QVariant(labels_[section - 1]) : QVariant();
}

}  // namespace tbdprof::viewer
