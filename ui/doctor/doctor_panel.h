#pragma once

// The Data page's Doctor tab: `netsmith-cli doctor` in the studio (doctor/doctor.h). It runs on
// a background thread with the stage, the time spent and the time left on its progress bar; Stop
// keeps what is finished, and Run again goes on from there (the same folder as the CLI's,
// doctor/PROJECT beside the project file). The findings come as galleries: likely label errors
// (picture, given class, the class it looks like, the probability of its label), duplicate pairs
// side by side with the leaks across splits first, and outliers with the reason; the class
// balance with buttons that set class weights in the loss or a balanced sampler. A finding's
// sample can be relabelled as suggested or excluded from the data (doctor_actions.h), each an
// undo step.
#include <QImage>
#include <QWidget>

#include <map>
#include <memory>
#include <string>

class QCheckBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace netsmith::doctor {
struct DoctorReport;
struct DoctorProgress;
struct LabelIssue;
struct SampleRef;
}  // namespace netsmith::doctor

namespace netsmith::ui {

class BackgroundJob;
class ProjectDocument;

class DoctorPanel : public QWidget {
  Q_OBJECT

 public:
  explicit DoctorPanel(ProjectDocument* document, QWidget* parent = nullptr);
  ~DoctorPanel() override;

  /// Runs the doctor on the open project with the form's settings; finished() follows.
  void run();
  /// Stops it (what is finished is kept; run() goes on from there).
  void stop();
  bool isRunning() const;
  /// The folder it writes to: doctor/PROJECT beside the project file.
  QString folder() const;
  const doctor::DoctorReport& report() const { return *m_report; }
  QString errorText() const { return m_error; }

  QSpinBox* folds() const { return m_folds; }
  QSpinBox* epochs() const { return m_epochs; }
  QSpinBox* limit() const { return m_limit; }
  QCheckBox* checkLabels() const { return m_checkLabels; }
  QPushButton* runButton() const { return m_run; }
  QPushButton* stopButton() const { return m_stop; }
  QProgressBar* progressBar() const { return m_progress; }
  QLabel* summary() const { return m_summary; }
  QPushButton* classWeightsButton() const { return m_classWeights; }
  QPushButton* samplerButton() const { return m_sampler; }
  QPushButton* relabelButton() const { return m_relabel; }
  QPushButton* excludeButton() const { return m_exclude; }
  QListWidget* labelIssues() const { return m_labels; }
  QListWidget* duplicates() const { return m_duplicates; }
  QListWidget* outliers() const { return m_outliers; }

 Q_SIGNALS:
  void finished();

 private:
  void showProgress(const doctor::DoctorProgress& progress);
  void showReport();
  void showIntro();
  /// Label checks on or off as the project's task allows.
  void fitToTask();
  void done();
  QString className(std::int64_t k) const;
  /// The sample of the finding selected in the shown gallery (a duplicate pair's first image),
  /// and the label issue when it is one; null when none is selected.
  const doctor::SampleRef* selectedSample(const doctor::LabelIssue** issue) const;
  void updateActions();
  void relabelSelected();
  void excludeSelected();
  /// Struck-through findings whose sample data.exclude lists.
  void markExcluded();
  void updateBalanceButtons();

  ProjectDocument* m_document;
  QSpinBox* m_folds;
  QSpinBox* m_epochs;
  QSpinBox* m_limit;
  QCheckBox* m_checkLabels;
  QPushButton* m_run;
  QPushButton* m_stop;
  QProgressBar* m_progress;
  QLabel* m_status;
  QLabel* m_summary;
  QLabel* m_balance;
  QPushButton* m_classWeights;
  QPushButton* m_sampler;
  QPushButton* m_relabel;
  QPushButton* m_exclude;
  QTabWidget* m_tabs;
  QListWidget* m_labels;
  QListWidget* m_duplicates;
  QListWidget* m_outliers;
  BackgroundJob* m_job;
  std::unique_ptr<doctor::DoctorReport> m_report;
  std::map<std::string, QImage> m_pictures;  ///< "split#index" -> thumbnail
  QString m_error;
};

}  // namespace netsmith::ui
