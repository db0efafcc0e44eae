#pragma once

// The start page's example data: each data set `netsmith-cli make-dataset` writes (mosaics,
// rotations, scenes with masks and boxes), built from Fashion-MNIST's items into a folder the
// user picks, in the background with a progress bar and Cancel; once written, the studio
// offers New from data on it. A cancelled or failed data set leaves no manifest (core's rule),
// and says so.
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace netsmith::ui {

class BackgroundJob;

class ExampleDataBox : public QWidget {
  Q_OBJECT

 public:
  explicit ExampleDataBox(QWidget* parent = nullptr);

  /// Writes data set `name` into `folder` (new, or an empty folder) in the background; made()
  /// or the status line's error follows. What the Make button does once a folder is chosen.
  void make(const QString& name, const QString& folder);
  bool isRunning() const;

  QComboBox* dataSets() const { return m_sets; }
  QSpinBox* trainingImages() const { return m_train; }
  QPushButton* makeButton() const { return m_make; }
  QPushButton* cancelButton() const { return m_cancel; }
  QProgressBar* progressBar() const { return m_progress; }
  QLabel* status() const { return m_status; }

 Q_SIGNALS:
  /// The data set is whole in `folder`.
  void made(const QString& folder);

 private:
  void chooseFolder();
  void finished(const QString& folder, const QString& error, bool cancelled);

  QComboBox* m_sets;
  QSpinBox* m_train;
  QPushButton* m_make;
  QPushButton* m_cancel;
  QProgressBar* m_progress;
  QLabel* m_status;
  BackgroundJob* m_job;
};

}  // namespace netsmith::ui
