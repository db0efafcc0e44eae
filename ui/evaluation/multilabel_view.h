#pragma once

// The Evaluation page for multi-label classification: the per-label table (AP, F1 and the
// threshold the run used, from core's figures), the precision-recall curve of the chosen label
// with a threshold slider that counts TP / FP / FN at any threshold from the kept samples, and
// the samples with the highest loss (their true and predicted label sets). A click on a sample
// opens it with the Grad-CAM map of each label.
#include <cstdint>
#include <vector>

#include "evaluation/task_view.h"

class QCustomPlot;
class QLabel;
class QListWidget;
class QSlider;
class QTableWidget;

namespace netsmith::ui {

class MultiLabelView : public TaskView {
  Q_OBJECT

 public:
  explicit MultiLabelView(QWidget* parent = nullptr);
  void showResult(const eval::Evaluation& evaluation) override;
  void clearResult() override;
  QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                        const eval::SampleOutcome& sample,
                        const eval::Evaluation& evaluation) override;

  /// The label whose curve and counts are shown (a row of the table).
  void selectLabel(int label);
  int currentLabel() const { return m_label; }
  /// Counts at `threshold` (in [0, 1]; the slider shows it to its 1/1000 steps). Choosing a
  /// label sets the run's threshold for it exactly; the slider's steps set 1/1000s.
  void setThreshold(double threshold);
  double threshold() const { return m_threshold; }
  struct Counts {
    std::int64_t tp = 0, fp = 0, fn = 0, tn = 0;
  };
  /// The chosen label's counts at the slider's threshold (a label is predicted at a
  /// probability >= the threshold, as core counts it).
  Counts counts() const { return m_counts; }

  QTableWidget* table() const { return m_table; }
  QCustomPlot* curve() const { return m_curve; }
  QSlider* slider() const { return m_slider; }
  QLabel* countsLabel() const { return m_countsLabel; }
  QListWidget* gallery() const { return m_gallery; }

 private:
  void drawCurve();
  void updateCounts();
  void fillGallery();

  const eval::Evaluation* m_evaluation = nullptr;
  int m_label = -1;
  std::vector<double> m_used;  ///< each label's threshold in the run's figures
  double m_threshold = 0.5;    ///< the counts' threshold
  Counts m_counts;
  QTableWidget* m_table;
  QCustomPlot* m_curve;
  QSlider* m_slider;
  QLabel* m_countsLabel;
  QListWidget* m_gallery;
};

}  // namespace netsmith::ui
