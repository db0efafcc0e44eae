#pragma once

// The Data page's class list: the classes in the model's output order, and what the training
// source's format lets a project change about them (data::ClassNaming): names typed over where
// the project names the classes (IDX, CIFAR, YOLO ids, mask values), the order moved up and
// down where the project only orders what the data names (COCO categories, VOC names), a
// colour per class for segmentation masks. Class folders and manifests name their classes
// themselves: the list says where to rename them (the studio does not move a user's files).
// Each change is one undoable edit of data.classes (data.colors). Renaming or reordering says
// so when runs of the project have checkpoints: they keep the classes they were trained with.
#include <QGroupBox>
#include <QStringList>

#include "common/json.h"
#include "data/source_formats.h"

class QLabel;
class QTableWidget;
class QTableWidgetItem;
class QToolButton;

namespace netsmith::ui {

class ProjectDocument;

class ClassEditor : public QGroupBox {
  Q_OBJECT

 public:
  explicit ClassEditor(ProjectDocument* document, QWidget* parent = nullptr);

  /// The classes a scan of the project's training source read: listed while the project names
  /// none itself and the source is the one scanned.
  void setScanned(const QStringList& classes);
  /// Shows the open project's classes again (after an edit, an undo, a load).
  void refresh();
  /// Forgets the scan and the warning (another project was opened).
  void clear();

  QTableWidget* table() const { return m_table; }
  QToolButton* upButton() const { return m_up; }
  QToolButton* downButton() const { return m_down; }
  QLabel* note() const { return m_note; }
  /// What an edit changed for earlier checkpoints, or why an edit was refused.
  QLabel* warning() const { return m_warning; }
  /// The classes as listed, in output order.
  QStringList classes() const;
  /// What the training source's format lets the list change (names, order, or neither).
  data::ClassNaming naming() const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  bool segmentation() const;
  void edited(QTableWidgetItem* item);
  /// What a cell's edit to `text` changes (a name, a colour), or why not.
  void apply(int row, int column, const QString& text);
  void move(int delta);
  /// Writes data.classes (and data.colors, when given) as one undoable edit named `text`.
  void write(const QStringList& classes, const Json& colors, const QString& text,
             bool changesCheckpoints);
  /// The project's colours, one per listed class (the overlay's defaults where it gives none).
  QStringList colours() const;
  /// Runs of the open project whose folders hold a checkpoint.
  int runsWithCheckpoints() const;

  ProjectDocument* m_document;
  QStringList m_scanned;
  Json m_scannedSource;  ///< the training source m_scanned was read from
  QTableWidget* m_table;
  QToolButton* m_up;
  QToolButton* m_down;
  QLabel* m_note;
  QLabel* m_warning;
  bool m_filling = false;
  bool m_keepWarning = false;  ///< the next refresh follows this editor's own edit
};

}  // namespace netsmith::ui
