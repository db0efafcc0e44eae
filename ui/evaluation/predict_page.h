#pragma once

// The Predict page: a trained model tried on images without labels. Images come by dropping
// files or folders on the page, by pasting them (Ctrl+V: copied files, or paths as text) or
// from Add images...; they are predicted in the background, preprocessed as eval preprocesses
// a split (core/eval/predict.h, the code behind `netsmith-cli predict`). The image chosen in
// the list is shown large with its answer drawn: class probabilities as bars (a classifier's
// Grad-CAM map on demand), a mask over the image (its opacity on a slider), boxes (a
// confidence slider), or the predicted values. The model: the current run's checkpoint
// (setModel, as the Evaluation page follows it), or any checkpoint opened here.
#include <QPixmap>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "eval/predict.h"
#include "registries/registries_fwd.h"

class QLabel;
class QLayout;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSlider;
class QVBoxLayout;

namespace netsmith::ui {

class BackgroundJob;

class PredictPage : public QWidget {
  Q_OBJECT

 public:
  explicit PredictPage(RegistriesPtr registries, QWidget* parent = nullptr);
  ~PredictPage() override;

  /// Loads the model (a checkpoint, or a project with its init_from's weights) and predicts
  /// the images already listed again with it. A model that does not load is named on the page.
  void setModel(const QString& path);
  QString model() const { return m_modelPath; }
  /// Adds image files and folders (searched recursively); each image once. Predicted in the
  /// background: predicted() follows.
  void addImages(const QStringList& paths);
  void clearImages();
  int imageCount() const;
  /// Shows image `row` of the list large.
  void select(int row);
  /// A classifier: the Grad-CAM map of the predicted class over the image instead of it.
  void showGradCam(bool on);
  /// Boxes drawn from this score (0..1); masks drawn at this opacity (0..1).
  void setConfidence(double score);
  void setOpacity(double opacity);
  /// What is shown now: the picture, the bars' lines ("Sneaker 92.1%"), the caption.
  QPixmap shownPicture() const;
  QStringList shownBars() const;
  QString shownCaption() const;
  /// The latest prediction of each listed image, in list order.
  const std::vector<eval::PredictedImage>& predictions() const { return m_images; }

 Q_SIGNALS:
  /// A batch of images has its predictions (or the model changed and all have them again).
  void predicted();

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  /// The model and the buttons above the page; the chosen image's panel; its sliders.
  QLayout* modelRow();
  QWidget* shownPanel();
  QLayout* controlsRow();
  /// Loads m_modelPath once (its error shown on the page), then predicts what waits.
  void loadModel();
  void openModel();
  void chooseImages();
  void paste();
  /// Predicts the listed images without a prediction yet (all of them after a model change).
  void predictPending();
  void showResults(std::vector<eval::PredictedImage> results);
  void showSelected();
  /// The drawn picture at the size the page has room for.
  void fitPicture();
  QString captionOf(const eval::PredictedImage& p) const;
  QImage drawn(const eval::PredictedImage& p) const;
  void setBars(const eval::PredictedImage& p);

  RegistriesPtr m_registries;
  std::shared_ptr<const eval::Predictor> m_predictor;
  QString m_modelPath;
  std::vector<eval::PredictedImage> m_images;
  std::vector<bool> m_done;  ///< per image: predicted with the current model
  QLabel* m_modelLabel;
  QLabel* m_status;
  QListWidget* m_list;
  QLabel* m_picture;
  QPixmap m_shown;  ///< the drawn picture, before fitting
  QLabel* m_caption;
  QVBoxLayout* m_barsLayout;
  QWidget* m_bars;
  QStringList m_barLines;
  QPushButton* m_gradCam;
  QSlider* m_confidence;
  QSlider* m_opacity;
  QLabel* m_confidenceLabel;
  QLabel* m_opacityLabel;
  QProgressBar* m_progress;
  BackgroundJob* m_job;
  bool m_showGradCam = false;
  /// The last Grad-CAM picture drawn, and the model and image it is of.
  mutable QString m_camKey;
  mutable QImage m_camImage;
  bool m_loadFailed = false;  ///< m_modelPath did not load: not tried again until set again
};

}  // namespace netsmith::ui
