#pragma once

// The Data page: the sources of each split (IDX, image folder, CSV manifest, CIFAR binary) with
// file and folder pickers, the validation split, normalisation and how images are fitted to the
// model input; a background scan (progress, cancel) that reads every training image once and
// reports split sizes, the class list (forms/class_editor.h: names, order, colours where the
// data's format lets the project set them), the class histogram (with an imbalance warning and a
// class-weights switch), mean/std, skipped or corrupt files with their reasons, and a grid of
// samples. Data whose samples are not one class each shows what its task counts of its targets
// instead (data::TargetSummary's chart and table, drawn by forms/data_targets.cpp: multi-label
// images per label and the labels' co-occurrence, regression target histograms, segmentation
// class pixel shares, detection boxes per class and their sizes) and its images with their targets.
// Its Doctor tab (doctor/doctor_panel.h) runs the data doctor.
#include <QImage>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <functional>
#include <optional>
#include <string>

#include "common/json.h"
#include "data/data_scan.h"
#include "project/project.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;
class QToolButton;

namespace netsmith::ui {

class BackgroundJob;
class ClassEditor;
class DoctorPanel;
class ProjectDocument;

/// What a scan found.
struct DataScan {
  bool ok = false;
  bool cancelled = false;
  QString error;
  QStringList classes;
  qint64 train = 0, validation = 0, test = 0;
  QVector<qint64> trainCounts, validationCounts, testCounts;
  QStringList skipped;  ///< "item: reason"
  QStringList subsets;  ///< which subsets the data's limits took
  QVector<double> mean, std;
  QString normalization;
  QVector<QImage> samples;     ///< a few training images per class
  QVector<int> sampleLabels;   ///< -1: a sample of data without one class per sample
  QStringList sampleCaptions;  ///< each sample's target as a person reads it
  /// Samples of one class each (counted per class above); otherwise what the project's task
  /// counts of its training targets (data::TargetSummary; none when the task gives none).
  bool oneClassPerSample = true;
  std::optional<data::TargetSummary> targets;
};

/// A task's chart of its training targets (bars per class, or histograms) drawn on `plot`.
void drawSummaryChart(QCustomPlot* plot, const data::SummaryChart& chart);
/// A task's table of its training targets (a co-occurrence, box sizes) in `table`.
void fillSummaryTable(QTableWidget* table, const data::SummaryTable& summary);

/// Opens `project`'s data as `config` gives it (its data section as read) and scans it
/// (DataPage::scan runs this off the UI thread); `progress` gets (done, total) and returns false to
/// stop early (a partial, cancelled scan comes back).
DataScan scanProjectData(const project::Project& project, const data::DataConfig& config,
                         const augment::TransformRegistry& transforms,
                         const data::TargetStatisticsFactory& statistics,
                         const std::function<bool(qint64, qint64)>& progress);

class DataPage : public QWidget {
  Q_OBJECT

 public:
  explicit DataPage(ProjectDocument* document, QWidget* parent = nullptr);

  /// Reads every source and every training image once, in the background; scanned() follows.
  void scan();
  void cancelScan();
  bool isScanning() const;
  const DataScan& result() const { return m_scan; }
  QListWidget* skippedList() const { return m_skipped; }
  QListWidget* sampleGrid() const { return m_grid; }
  QCustomPlot* histogram() const { return m_histogram; }
  QTableWidget* cooccurrence() const { return m_cooccurrence; }
  DoctorPanel* doctor() const { return m_doctor; }
  ClassEditor* classEditor() const { return m_classEditor; }
  /// Show only samples of class `label` in the grid (-1: all).
  void filterSamples(int label);
  /// Sets the train source to a format and path (what the pickers do).
  void setSource(const QString& split, const QString& format, const QString& key,
                 const QString& path);

 Q_SIGNALS:
  void scanned();

 private:
  struct SourceWidgets {
    QComboBox* format = nullptr;
    QLineEdit* path = nullptr;
    QLineEdit* labels = nullptr;  ///< the format's second key (IDX's labels file)
    QLabel* pathLabel = nullptr;  ///< the first key's name
    QLabel* labelsLabel = nullptr;
    QWidget* labelsRow = nullptr;  ///< the second key's field and its Browse button
  };

  void refreshForms();
  void showScan();
  /// After a class list edit: the scan's names follow (renamed, or the data read again).
  void followClassNames();
  void scanDone(DataScan scan);
  void writeData(const Json& data, const QString& text, const QString& mergeKey = {});
  /// Writes the mean and std typed in, or marks the fields with why they cannot be.
  void editExplicitNormalization();
  /// The split, normalization and fit fields: names, ranges, tooltips.
  void setupFormWidgets();
  /// The scan's button, summary, histogram, lists and filter: names and looks.
  void setupScanWidgets();
  /// The sources, the validation split, preprocessing and the class list (left), scrolled.
  QWidget* buildFormsPanel();
  /// The scan row, summary, imbalance warning and the results' tabs (right).
  QWidget* buildResultsPanel();
  /// The validation, normalization and fit fields write the data section.
  void connectFormEdits();
  /// Scan, Cancel, the scan's progress, Use class weights and the sample filter.
  void connectScan();
  /// A project loaded or its data section changed: the forms and the scan follow.
  void connectDocument();
  QWidget* buildSourceBox(const QString& split);
  /// The source box's format, path fields and Browse buttons write the split's source.
  void connectSourceBox(const QString& split, SourceWidgets& w, QToolButton* pick,
                        QToolButton* pickLabels);
  /// showScan() without a scan to show: why (not scanned, cancelled, failed).
  void showUnreadScan();
  /// The imbalance warning and Use class weights, from the scan's training counts.
  void showImbalance();

  ProjectDocument* m_document;
  SourceWidgets m_train, m_test;
  QDoubleSpinBox* m_fraction;
  QSpinBox* m_splitSeed;
  QCheckBox* m_stratified;
  QComboBox* m_normalize;
  /// normalize "explicit": one number, or one per channel, each (shown only then).
  QLineEdit* m_mean;
  QLineEdit* m_std;
  QFormLayout* m_prepForm = nullptr;
  QComboBox* m_fit;
  QLabel* m_input;
  QPushButton* m_scanButton;
  QPushButton* m_cancelButton;
  QProgressBar* m_progress;
  QLabel* m_summary;
  QLabel* m_imbalance;
  QPushButton* m_classWeights;
  QCustomPlot* m_histogram;
  QTableWidget* m_cooccurrence;
  QTabWidget* m_tabs = nullptr;
  QListWidget* m_skipped;
  QComboBox* m_classFilter;
  QListWidget* m_grid;
  DoctorPanel* m_doctor = nullptr;
  ClassEditor* m_classEditor = nullptr;
  DataScan m_scan;
  bool m_refreshing = false;
  BackgroundJob* m_scanJob;
};

}  // namespace netsmith::ui
