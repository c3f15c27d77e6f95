// A widget that paints with a function (Summary and Compare charts), so the same code paints the
// screen, a PNG and an SVG.
#pragma once

#include <QWidget>

#include <functional>

#include "palette.h"

namespace tbdprof::viewer {

class ChartWidget : public QWidget {
    Q_OBJECT
public:
    using PaintFn = std::function<void(QPainter&, const QRect&, const ViewerColors&)>;
    ChartWidget(PaintFn paint, QWidget* parent = nullptr);
    void paintTo(QPainter& painter, const QRect& area) { paint_(painter, area, colors_); }
    QSize sizeHint() const override { return {900, 520}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    PaintFn paint_;
    ViewerColors colors_;
};

}  // namespace tbdprof::viewer
