#pragma once

// The Model page: palette | graph canvas (or the summary table) | inspector, with the totals
// bar and the problems list below. The editor's commands have shortcuts while the page has
// focus: Delete, Ctrl+C / Ctrl+V / Ctrl+D, Ctrl+A, Ctrl+Shift+L (auto layout), Ctrl+0 (fit).
#include <QString>
#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace netsmith::ui {

class GraphCanvas;
class ModelEditor;
class NodeInspector;
class OpPalette;
class ProjectDocument;

class ModelPage : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPage(ProjectDocument* document, QWidget* parent = nullptr);

  ModelEditor* editor() const { return m_editor; }
  GraphCanvas* canvas() const { return m_canvas; }
  OpPalette* opPalette() const { return m_palette; }
  NodeInspector* inspector() const { return m_inspector; }
  /// A project was loaded: everything is redrawn (laid out when the file has no positions).
  void projectLoaded();
  /// The model changed: canvas, table, totals, problems.
  void modelChanged();
  /// The palette's double-click: append `op` after the selected node.
  void appendOp(const QString& op);
  /// Edit > Cut, Copy, Paste, Delete, Select All on the canvas's nodes.
  void cutSelection();
  void copySelection();
  void pasteClipboard();
  void deleteSelection();
  void selectAllNodes();
  /// The summary table as CSV (node, op, shape, params, MACs, activation bytes), atomically.
  bool exportTableCsv(const QString& path, QString* error = nullptr);
  /// Training memory in bytes at `batch` and the largest batch that fits `budgetBytes`.
  qint64 trainingMemory(qint64 batch) const;
  qint64 largestBatch(qint64 budgetBytes) const;
  QString totalsText() const;

 private:
  void refreshTable();
  void refreshTotals();
  void refreshProblems();
  QWidget* buildGraphTab();
  QWidget* buildTableTab();

  ProjectDocument* m_document;
  ModelEditor* m_editor;
  OpPalette* m_palette;
  GraphCanvas* m_canvas;
  NodeInspector* m_inspector;
  QTabWidget* m_tabs = nullptr;
  QLabel* m_title = nullptr;
  QTableWidget* m_table = nullptr;
  QListWidget* m_problems = nullptr;
  QLabel* m_totals = nullptr;
  QSpinBox* m_batch = nullptr;
  QDoubleSpinBox* m_budget = nullptr;
};

}  // namespace netsmith::ui
