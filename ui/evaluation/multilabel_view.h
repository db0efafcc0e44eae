#pragma once

// The Evaluation page for multi-label classification: the per-label table (AP, F1 and the
// threshold the run used, from core's figures), the precision-recall curve of the chosen label
// with a threshold slider that counts TP / FP / FN at any threshold from the kept samples, and
// the samples with the highest loss (their true and predicted label sets). A click on a sample
// opens it with the Grad-CAM map of each label.
#include <cstdint>
#include <vector>

#include "evaluation/threshold_curve_view.h"

class QListWidget;

namespace netsmith::ui {

class MultiLabelView : public ThresholdCurveView {
  Q_OBJECT

 public:
  explicit MultiLabelView(QWidget* parent = nullptr);
  void showResult(const eval::Evaluation& evaluation) override;
  void clearResult() override;
  QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                        const eval::SampleOutcome& sample,
                        const eval::Evaluation& evaluation) override;

  /// The label whose curve and counts are shown (a row of the table). Choosing a label sets
  /// the run's threshold for it exactly; the slider's steps set 1/1000s.
  void selectLabel(int label) { selectRow(label); }
  int currentLabel() const { return currentRow(); }
  struct Counts {
    std::int64_t tp = 0, fp = 0, fn = 0, tn = 0;
  };
  /// The chosen label's counts at the slider's threshold (a label is predicted at a
  /// probability >= the threshold, as core counts it).
  Counts counts() const { return m_counts; }

  QListWidget* gallery() const { return m_gallery; }

 protected:
  RowScores rowScores(std::size_t label) const override;
  void showCounts() override;
  std::optional<double> rowThreshold(std::size_t label) const override;

 private:
  void fillGallery();

  std::vector<double> m_used;  ///< each label's threshold in the run's figures
  Counts m_counts;
  QListWidget* m_gallery;
};

}  // namespace netsmith::ui
