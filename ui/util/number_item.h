#pragma once

// A table cell that shows formatted text and sorts by a number kept in its UserRole; a NaN
// (no figure) sorts after every number.
#include <QTableWidgetItem>
#include <cmath>

namespace netsmith::ui {

class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const QString& text, double value) : QTableWidgetItem(text) {
    setData(Qt::UserRole, value);
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    const double a = data(Qt::UserRole).toDouble(), b = other.data(Qt::UserRole).toDouble();
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  }
};

}  // namespace netsmith::ui
