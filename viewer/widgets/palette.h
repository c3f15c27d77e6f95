// Colours for every view, derived from the application palette (light or dark, as the desktop has
// it) and rebuilt when it changes. Category colours come from the analyzer's one table, shared with
// the HTML report.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

namespace tbdprof::viewer {

struct ViewerColors {
    QColor background, alternate, text, dim_text, grid, selection, highlight;
    QColor iteration_a, iteration_b;
    // A warning box (the Summary's "memory breakdown unreliable"): its fill, left edge and text.
    QColor warning_fill, warning_edge, warning_text;
    bool dark = false;

    static ViewerColors from(const QPalette& palette);
    QColor category(int index) const;         // trace::kCategoryColors
    QColor label(const QString& name) const;  // stable per name: hue from a hash
    QColor phase(const QString& kind) const;  // forward / backward / optimizer
};

}  // namespace tbdprof::viewer
