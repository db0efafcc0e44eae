#pragma once

// One evaluated sample, large: its picture, true class, prediction and loss, its top-3
// probabilities, and the Grad-CAM map (core/explain) of the predicted class or of the true
// class (switchable) laid over it, the same map `netsmith-cli eval --gradcam` writes. A
// multi-label sample (its SampleView has probabilities) shows its labels and their
// probabilities instead, and the map of the label chosen in a list (each label's own score).
#include <QDialog>
#include <QPixmap>
#include <QString>

#include "explain/grad_cam.h"

class QComboBox;
class QLabel;
class QLayout;
class QRadioButton;

namespace netsmith::eval {
struct SampleOutcome;
}  // namespace netsmith::eval

namespace netsmith::ui {

class SampleDialog : public QDialog {
  Q_OBJECT

 public:
  /// Computes both maps at once (one forward and backward pass each); a failure is shown in
  /// the dialog in place of the maps.
  /// `perLabel`: a multi-label sample (its SampleView's probabilities and labels), a map per
  /// label.
  /// `registries`: the program's (Grad-CAM builds the checkpoint's model with its ops).
  SampleDialog(const QString& checkpoint, RegistriesPtr registries,
               const eval::SampleOutcome& sample, const std::vector<std::string>& classes,
               QWidget* parent = nullptr, bool perLabel = false);

  /// The map shown: of the predicted class (true) or of the true class (false).
  void showPredicted(bool predicted);
  /// Multi-label: shows the map of label `label` (the list's row).
  void mapOfLabel(int label);
  /// Takes both maps at `node` instead (any node with a feature map: the combo box lists them).
  void mapAt(const QString& node);
  const explain::GradCam& predictedMap() const { return m_predicted; }
  const explain::GradCam& trueMap() const { return m_true; }
  QString errorText() const { return m_error; }
  /// The overlay picture shown now (null when the maps failed).
  QPixmap overlay() const;

 private:
  /// The colour scale beside the map.
  QLayout* colourScale();
  explain::GradCam m_predicted, m_true;
  QString m_error;
  QLabel* m_picture;
  QLabel* m_map;
  QLabel* m_caption;
  QRadioButton* m_ofPredicted;
  QComboBox* m_node;
  QComboBox* m_labelChoice = nullptr;  ///< multi-label only
  QString m_checkpoint;
  RegistriesPtr m_registries;
  cv::Mat m_image;
  std::int64_t m_label = 0, m_predictedClass = 0;
  std::vector<std::string> m_classes;
  void compute(const std::string& node);
  void updateCaption();
  QString m_sampleText;
};

}  // namespace netsmith::ui
