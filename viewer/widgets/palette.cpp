#include "palette.h"

#include "tbdprof/trace/categories.h"

namespace tbdprof::viewer {

ViewerColors ViewerColors::from(const QPalette& palette) {
    ViewerColors c;
    c.background = palette.color(QPalette::Base);
    c.text = palette.color(QPalette::Text);
    c.dark = c.background.lightnessF() < 0.5;
    c.alternate = c.dark ? c.background.lighter(125) : c.background.darker(104);
    c.dim_text = c.dark ? c.text.darker(150) : c.text.lighter(180);
    c.grid = c.dark ? c.background.lighter(180) : c.background.darker(118);
    c.selection = palette.color(QPalette::Highlight);
    c.highlight = c.dark ? QColor(255, 230, 80) : QColor(200, 30, 30);
    c.iteration_a = c.dark ? QColor(60, 80, 110) : QColor(214, 226, 244);
    c.iteration_b = c.dark ? QColor(45, 60, 85) : QColor(236, 242, 250);
    c.warning_fill = c.dark ? QColor(74, 28, 28) : QColor(253, 236, 234);
    c.warning_edge = c.dark ? QColor(239, 83, 80) : QColor(198, 40, 40);
    c.warning_text = c.dark ? QColor(255, 205, 205) : QColor(127, 29, 29);
    return c;
}

QColor ViewerColors::category(int index) const {
    if (index < 0 || index >= trace::kCategoryCount) index = static_cast<int>(trace::Category::untagged);
    return QColor(QString::fromLatin1(trace::kCategoryColors[static_cast<size_t>(index)]));
}

QColor ViewerColors::label(const QString& name) const {
    // Copies and sets keep one colour each, so they read as data movement, not as kernels.
    if (name.startsWith("memcpy")) return dark ? QColor(220, 120, 200) : QColor(190, 60, 160);
    if (name.startsWith("memset")) return dark ? QColor(200, 170, 90) : QColor(150, 120, 40);
    // Communication lanes: exposed time alarms (red), overlapped time is hidden by computation (grey-green).
    if (name == "exposed communication") return dark ? QColor(235, 90, 80) : QColor(200, 40, 40);
    if (name == "overlapped communication") return dark ? QColor(120, 170, 140) : QColor(110, 160, 130);
    // FNV-1a, not qHash: the same name gets the same colour in every run and every trace.
    uint32_t hash = 2166136261u;
    for (const QChar c : name) hash = (hash ^ c.unicode()) * 16777619u;
    const int hue = static_cast<int>(hash % 360);
    const int saturation = 110 + static_cast<int>((hash >> 9) % 80);
    return QColor::fromHsv(hue, saturation, dark ? 200 : 215);
}

QColor ViewerColors::phase(const QString& kind) const {
    if (kind == "forward") return QColor(89, 161, 79);
    if (kind == "backward") return QColor(225, 87, 89);
    if (kind == "optimizer") return QColor(176, 122, 161);
    return grid;
}

}  // namespace tbdprof::viewer
