// Table models over report facts: one trace (Summary) or several side by side (Compare, with each
// trace's difference from the first, like `tbdprof compare`).
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

#include "report_facts.h"

namespace tbdprof::viewer {

class SummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit SummaryModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setReport(const analyzer::Report* report);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<ReportFact> facts_;
};

class CompareModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit CompareModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    // Rows: every (section, name) of any report, in first-seen order; columns: metric, then each trace.
    void setReports(const std::vector<const analyzer::Report*>& reports, const QStringList& labels);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        std::string section, name;
        bool bytes = false;
    };
    std::vector<Row> rows_;
    std::vector<std::vector<const ReportFact*>> cells_;  // [row][trace], nullptr: absent
    std::vector<std::vector<ReportFact>> columns_;
    QStringList labels_;
};

}  // namespace tbdprof::viewer
