#pragma once

// The Evaluation page for semantic segmentation: per class IoU, Dice and pixel share (core's
// figures, from the split's pixel confusion matrix) as a table and IoU bars, and the gallery of
// image / true mask / predicted mask, lowest IoU first (or highest), masks in the classes'
// colours as the Augment page draws them.
#include <QPixmap>

#include "evaluation/task_view.h"

class QComboBox;
class QCustomPlot;
class QListWidget;
class QTableWidget;

namespace netsmith::eval {
struct SampleOutcome;
}  // namespace netsmith::eval

namespace netsmith::ui {

class SegmentationView : public TaskView {
  Q_OBJECT

 public:
  explicit SegmentationView(QWidget* parent = nullptr);
  void showResult(const eval::Evaluation& evaluation) override;
  void clearResult() override;
  QDialog* sampleDialog(const QString& checkpoint, const RegistriesPtr& registries,
                        const eval::SampleOutcome& sample,
                        const eval::Evaluation& evaluation) override;

  /// A gallery tile: the image, its true mask over it and its predicted mask over it, side by
  /// side, each `side` pixels high.
  static QPixmap tile(const eval::SampleOutcome& sample, const std::vector<std::string>& colors,
                      int side);

  QTableWidget* table() const { return m_table; }
  QCustomPlot* bars() const { return m_bars; }
  QComboBox* order() const { return m_order; }
  QListWidget* gallery() const { return m_gallery; }

 private:
  void fillGallery();

  const eval::Evaluation* m_evaluation = nullptr;
  QTableWidget* m_table;
  QCustomPlot* m_bars;
  QComboBox* m_order;
  QListWidget* m_gallery;
};

}  // namespace netsmith::ui
