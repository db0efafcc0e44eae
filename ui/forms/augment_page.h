#pragma once

// The Augment page: the transform list (add from a grouped menu, remove, reorder by drag or
// the arrows, enable/disable, probability) with each transform's form from its schema, and a
// live preview grid: the same K training images with N random draws of the current pipeline,
// computed off the UI thread (stale results dropped), with a seed and a re-roll button.
#include <QImage>
#include <QString>
#include <QWidget>
#include <memory>

#include "common/json.h"

class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace netsmith::ui {

struct AugmentPreviewSource;
class BackgroundJob;
class ProjectDocument;
class SchemaForm;

class AugmentPage : public QWidget {
  Q_OBJECT

 public:
  explicit AugmentPage(ProjectDocument* document, QWidget* parent = nullptr);

  QListWidget* list() const { return m_list; }
  SchemaForm* form() const { return m_form; }
  /// Selects transform `row` (its form shows).
  void selectRow(int row);
  void addTransform(const QString& name);
  void removeRow(int row);
  /// Moves the transform at `from` to `to` (what a drag does).
  void moveRow(int from, int to);
  void setEnabled(int row, bool enabled);
  /// Re-draws the preview with the next seed.
  void reroll();
  /// The last preview shown, and how many have been shown.
  QImage previewImage() const { return m_preview; }
  int previewCount() const { return m_previews; }
  QString previewError() const { return m_previewError; }
  /// How many times the preview has opened (read) the data: once while the data section stays
  /// the same.
  int previewDataOpens() const;
  /// Recomputes the preview now (it also follows every change).
  void updatePreview();

 Q_SIGNALS:
  void previewUpdated();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  /// The Add button with its menu of transforms, grouped like the registry.
  QToolButton* buildAddButton();
  /// Remove, Up and Down act on the list's current row.
  void connectListButtons(QPushButton* remove, QPushButton* up, QPushButton* down);
  /// The list's buttons, the transform list and the selected transform's form (left).
  QWidget* buildListPanel(QToolButton* add, QPushButton* remove, QPushButton* up,
                          QPushButton* down);
  /// The preview's controls, its image in a scroll area and its caption (right).
  QWidget* buildPreviewPanel(QPushButton* reroll);
  /// The form's edits and "Sweep this setting" for the selected transform.
  void connectForm();
  /// The list's selection, ticks and drags write the project.
  void connectList();
  /// The preview's controls and the project's changes redraw the preview.
  void connectPreviewUpdates();
  void refresh();
  void showForm();
  void write(const Json& augment, const QString& text, const QString& mergeKey = {});
  Json augment() const;
  void showPreview(const QImage& image, const QString& info, const QString& error);

  ProjectDocument* m_document;
  QListWidget* m_list;
  SchemaForm* m_form;
  QLabel* m_formTitle;
  QLabel* m_previewLabel;
  QLabel* m_previewInfo;
  QSpinBox* m_seed;
  QSpinBox* m_samples;
  QSpinBox* m_draws;
  QImage m_preview;
  QString m_previewError;
  int m_previews = 0;
  int m_formRow = -1;
  bool m_refreshing = false;
  BackgroundJob* m_previewJob;
  std::shared_ptr<AugmentPreviewSource> m_previewSource;
};

}  // namespace netsmith::ui
