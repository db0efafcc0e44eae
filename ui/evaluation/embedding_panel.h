#pragma once

// The class view's Embedding tab: the evaluated samples' penultimate features
// (eval::Evaluation::features) laid out in 2-D by PCA and Barnes-Hut t-SNE (eval/tsne.h) on
// a background thread with progress, drawn as a scatter coloured by class, by right or wrong,
// or by confidence. The wheel zooms and a drag pans; the pointer over a point shows its picture
// and labels; a click opens the sample (with its Grad-CAM maps, as the galleries do); with the
// lasso on, a drag draws a loop and the samples inside are listed with their accuracy.
#include <QPolygonF>
#include <QWidget>

#include <cstdint>
#include <vector>

class QComboBox;
class QCustomPlot;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QCPCurve;
class QCPGraph;

namespace netsmith::eval {
struct Evaluation;
}  // namespace netsmith::eval

namespace netsmith::ui {

class BackgroundJob;

class EmbeddingPanel : public QWidget {
  Q_OBJECT

 public:
  enum class Colouring { Class, Correct, Confidence };
  /// A laid-out sample: its position in the split, its place in the plane, and its index in
  /// the evaluation's samples.
  struct Point {
    std::int64_t position = 0;
    double x = 0, y = 0;
    std::size_t sample = 0;
  };

  explicit EmbeddingPanel(QWidget* parent = nullptr);

  /// The evaluation whose samples to lay out (kept by the page for as long as it is shown);
  /// null, or one without features, leaves nothing to lay out. Drops an earlier layout.
  void setEvaluation(const eval::Evaluation* evaluation);
  /// Lays the samples out in the background; laidOut() follows (also after a stop, with the
  /// layout so far).
  void layOut();
  void stop();
  bool isRunning() const;
  void colourBy(Colouring colouring);
  /// Selects the points inside `polygon` (the chart's pixels), as a lasso does.
  void selectInside(const QPolygonF& polygon);
  /// The point nearest `pixel` of the chart within 10 pixels, or -1.
  int pointAt(QPointF pixel) const;
  /// Point `point`'s place in the chart's pixels.
  QPointF pixelOf(int point) const;

  const std::vector<Point>& points() const { return m_points; }
  /// Indices into points() of the selection.
  const std::vector<int>& selection() const { return m_selection; }
  QCustomPlot* chart() const { return m_chart; }
  QPushButton* layOutButton() const { return m_layOut; }
  QPushButton* lassoButton() const { return m_lasso; }
  QComboBox* colouring() const { return m_colouring; }
  QLabel* hoverText() const { return m_hoverText; }
  QLabel* selectionText() const { return m_selectionText; }
  QListWidget* selectionList() const { return m_selectionList; }

 Q_SIGNALS:
  /// The user asked to open sample `position` of the evaluated split large.
  void sampleRequested(qint64 position);
  void laidOut();

 protected:
  /// The chart's mouse: hover, click, lasso.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void draw();
  void showHover(int point);
  void showSelection();
  void setLassoMode(bool on);
  void drawLasso();

  const eval::Evaluation* m_evaluation = nullptr;
  QCustomPlot* m_chart;
  QPushButton* m_layOut;
  QPushButton* m_stop;
  QProgressBar* m_progress;
  QComboBox* m_colouring;
  QPushButton* m_lasso;
  QLabel* m_status;
  QLabel* m_hoverPicture;
  QLabel* m_hoverText;
  QLabel* m_selectionText;
  QListWidget* m_selectionList;
  BackgroundJob* m_job;
  std::vector<Point> m_points;
  std::vector<int> m_selection;
  QCPGraph* m_selected = nullptr;  ///< the selection's rings, over the points
  QCPCurve* m_loop = nullptr;      ///< the lasso being drawn
  QPolygonF m_lassoPixels;
  bool m_drawing = false;
  QPointF m_pressed;  ///< where the left button went down (a click if it comes up there)
  int m_hovered = -1;
};

}  // namespace netsmith::ui
