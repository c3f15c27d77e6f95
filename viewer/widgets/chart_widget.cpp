#include "chart_widget.h"

#include <QEvent>
#include <QPainter>

namespace tbdprof::viewer {

ChartWidget::ChartWidget(PaintFn paint, QWidget* parent)
    : QWidget(parent), paint_(std::move(paint)), colors_(ViewerColors::from(palette())) {
    setMinimumSize(400, 300);
}

void ChartWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintTo(painter, rect());
}

bool ChartWidget::event(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        colors_ = ViewerColors::from(palette());
        update();
    }
    return QWidget::event(event);
}

}  // namespace tbdprof::viewer
