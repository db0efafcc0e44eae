#pragma once

// File > New from data: a person points at their data (a folder or a file), the studio
// recognises it and proposes a project (core/import/project_starter.h) in the background with
// progress, shows what it found (format, classes, counts, unreadable files, image sizes) and
// lets every choice be changed in fields before anything is written: the task and template,
// the input's channels and size, the validation share, the normalisation (with the scanned mean
// and std), the class names the project writes, and where the project file goes.
#include <QDialog>

#include <optional>

#include "import/project_starter.h"

class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace netsmith::ops {
class OpRegistry;
}
namespace netsmith::task {
class TaskRegistry;
}

namespace netsmith::ui {

class BackgroundJob;

class NewFromDataDialog : public QDialog {
  Q_OBJECT
 public:
  NewFromDataDialog(RegistriesPtr registries, const QString& templatesDir,
                    QWidget* parent = nullptr);

  /// Sets the data path and recognises it (as typing it and pressing Enter does).
  void setDataPath(const QString& path);
  /// The proposal with every field's value applied, ready to be saved.
  project::Project project() const;
  QString projectPath() const;
  bool isScanning() const;
  bool hasProposal() const { return m_proposal.has_value(); }

  QLineEdit* dataEdit() const { return m_data; }
  QComboBox* taskBox() const { return m_task; }
  QComboBox* templateBox() const { return m_template; }
  QSpinBox* channelsBox() const { return m_channels; }
  QSpinBox* heightBox() const { return m_height; }
  QSpinBox* widthBox() const { return m_width; }
  QSpinBox* validationBox() const { return m_validation; }
  QSpinBox* batchBox() const { return m_batch; }
  QComboBox* normalizationBox() const { return m_normalization; }
  QListWidget* classList() const { return m_classes; }
  QLineEdit* projectEdit() const { return m_projectPath; }
  QPushButton* createButton() const;
  QLabel* statusLabel() const { return m_status; }

 Q_SIGNALS:
  /// A proposal arrived (or the data could not be used: statusLabel() says why).
  void scanned();

 private:
  void rescan();
  void showProposal(import::DataProposal proposal);
  void showError(const QString& message);
  void checkFields();
  void chooseFolder();
  void chooseFile();

  RegistriesPtr m_registries;
  QString m_templatesDir;
  std::optional<import::DataProposal> m_proposal;
  bool m_projectPathEdited = false;
  bool m_filling = false;  ///< fields being filled from a proposal: no rescan, no edit marks

  QLineEdit* m_data;
  QComboBox* m_task;
  QComboBox* m_template;
  QProgressBar* m_progress;
  QLabel* m_status;
  QPlainTextEdit* m_found;
  QSpinBox* m_channels;
  QSpinBox* m_height;
  QSpinBox* m_width;
  QSpinBox* m_validation;
  QSpinBox* m_batch;  ///< train.batch_size (the starter's: smaller for a small set)
  QComboBox* m_normalization;
  QLineEdit* m_mean;
  QLineEdit* m_std;
  QListWidget* m_classes;
  QLabel* m_classNote;
  QLineEdit* m_projectPath;
  QGroupBox* m_chosen = nullptr;
  QLabel* m_problems;
  QDialogButtonBox* m_buttons;
  BackgroundJob* m_job;
};

}  // namespace netsmith::ui
