#pragma once

// The dashboard's row of controls: the x axis (step, epoch, wall time), the loss smoothing,
// the gradient norm's log scale, "Follow", and a note once the charts skipped step points.
#include <QWidget>
#include <cstdint>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace netsmith::ui {

class DashboardControls : public QWidget {
  Q_OBJECT

 public:
  DashboardControls(double smoothing, QWidget* parent = nullptr);

  /// What the dashboard shows, put back into the controls without their signals answering.
  void showAxisMode(int mode);
  void showSmoothing(double weight);
  void showLogScale(bool on);
  void showFollow(bool on);
  /// `points` more step points were not drawn (0 after forgetRun()): the note says how many.
  void addSkipped(std::int64_t points);
  void forgetRun();

 Q_SIGNALS:
  void axisModeChosen(int mode);
  void smoothingChosen(double weight);
  void logScaleToggled(bool on);
  void followToggled(bool on);

 private:
  QComboBox* m_axis;
  QSlider* m_smoothing;
  QLabel* m_smoothingText;
  QCheckBox* m_log;
  QCheckBox* m_follow;
  QLabel* m_skipped;
  std::int64_t m_skippedPoints = 0;
};

}  // namespace netsmith::ui
