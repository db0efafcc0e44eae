#pragma once

// The palette: the registry's ops grouped (Convolution, Normalisation, ...) with a search box.
// Drag an op onto the canvas, or double-click it to append it after the selected node.
#include <QString>
#include <QWidget>

class QLineEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace netsmith::ops {
class OpRegistry;
}

namespace netsmith::ui {

class OpPalette : public QWidget {
  Q_OBJECT

 public:
  explicit OpPalette(const ops::OpRegistry& registry, QWidget* parent = nullptr);
  void setFilter(const QString& text);
  /// The palette's entry for `op` (nullptr when filtered out or unknown).
  QTreeWidgetItem* itemFor(const QString& op) const;
  QTreeWidget* tree() const { return m_tree; }

 Q_SIGNALS:
  void opActivated(const QString& op);

 private:
  QLineEdit* m_search;
  QTreeWidget* m_tree;
};

}  // namespace netsmith::ui
