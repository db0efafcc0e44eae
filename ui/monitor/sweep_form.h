#pragma once

// The Experiments page's form for the project's sweep section: method, trials, trials at once,
// objective, early stopping (ASHA) and the settings swept (added with "Sweep this setting" on
// the Training, Augment and Model pages' fields), with the section's problems below. Every
// change is an undoable edit of the section; the form follows the project's changes.
#include <QWidget>

#include "common/json.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace netsmith::ui {

class ProjectDocument;

class SweepForm : public QWidget {
  Q_OBJECT

 public:
  explicit SweepForm(ProjectDocument* document, QWidget* parent = nullptr);

  /// Shows the project's sweep section and its problems again.
  void refresh();
  /// Whether the sweep section, as the document checked it, has problems (shown below the form).
  bool hasProblems() const { return m_hasProblems; }

 Q_SIGNALS:
  /// The form shows the project's sweep section again (after refresh()).
  void refreshed();

 private:
  /// The fields' names, ranges and tooltips.
  void setupWidgets();
  void layOut();
  /// The fields write the sweep section.
  void connectFields();
  /// Sets `key` of the sweep section to `value` (null: removes it) as one undoable edit named
  /// `text`; nothing while the form is being refreshed.
  void editSweep(const char* key, const Json& value, const QString& text);

  ProjectDocument* m_document;
  QComboBox* m_method;
  QSpinBox* m_trials;
  QSpinBox* m_parallelTrials;
  QComboBox* m_objective;
  QCheckBox* m_asha;
  QSpinBox* m_minEpochs;
  QSpinBox* m_reduction;
  QTableWidget* m_params;
  QPushButton* m_removeParam;
  QLabel* m_problems;
  bool m_refreshing = false;
  bool m_hasProblems = false;
};

}  // namespace netsmith::ui
