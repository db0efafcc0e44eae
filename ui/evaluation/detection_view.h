#pragma once

// The Evaluation page for object detection: per class AP@[.5:.95], AP@.5 and recall (core's
// COCO figures), the chosen class's precision-recall curve at IoU 0.5 with a score threshold
// slider that counts TP / FP / FN at any score from the kept samples' detections, and the
// images with their true and predicted boxes (in the classes' colours, scores shown), ordered
// by their errors at the slider's score: missed objects, false detections, wrong classes and
// poor boxes. Of a split of more than 1,200 images only the 600 with the most and the fewest
// errors at score 0.5 keep their pictures (eval::kMaskSamplesKept); the gallery orders those.
#include <cstdint>
#include <vector>

#include <QPixmap>

#include "evaluation/threshold_curve_view.h"
#include "task/coco_map.h"

class QComboBox;
class QListWidget;

namespace netsmith::task {
struct SampleView;
}

namespace netsmith::ui {

/// One image's errors from a score (task::detectionErrors: found, missed, false, wrong class,
/// poor box), as the gallery orders and captions them.
task::DetectionErrors detectionErrors(const task::SampleView& view, float threshold);

class DetectionView : public ThresholdCurveView {
  Q_OBJECT

 public:
  explicit DetectionView(QWidget* parent = nullptr);
  void showResult(const eval::Evaluation& evaluation) override;
  void clearResult() override;
  QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                        const eval::SampleOutcome& sample,
                        const eval::Evaluation& evaluation) override;

  /// The class whose curve and counts are shown (a row of the table). The threshold is the
  /// score from which a detection counts (slider steps of 1/1000).
  void selectClass(int cls) { selectRow(cls); }
  int currentClass() const { return currentRow(); }
  struct Counts {
    std::int64_t tp = 0, fp = 0, fn = 0;
  };
  /// The chosen class's counts at the threshold, IoU 0.5 (crowd and difficult boxes neither
  /// found nor missed, a detection on one neither true nor false).
  Counts counts() const { return m_counts; }

  /// A gallery tile: the image with its true boxes, and with the detections from `threshold`
  /// (their scores written), side by side, each `side` pixels high.
  static QPixmap tile(const eval::SampleOutcome& sample, const std::vector<std::string>& colors,
                      int side, float threshold);

  QComboBox* order() const { return m_order; }
  QListWidget* gallery() const { return m_gallery; }

 protected:
  RowScores rowScores(std::size_t cls) const override;
  void showCounts() override;

 private:
  void fillGallery();

  Counts m_counts;
  QComboBox* m_order;
  QListWidget* m_gallery;
};

}  // namespace netsmith::ui
