#include "monitor/dashboard_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <algorithm>
#include <cmath>

namespace netsmith::ui {

DashboardControls::DashboardControls(double smoothing, QWidget* parent)
    : QWidget(parent),
      m_axis(new QComboBox(this)),
      m_smoothing(new QSlider(Qt::Horizontal, this)),
      m_smoothingText(new QLabel(QString::number(smoothing, 'f', 2), this)),
      m_log(new QCheckBox(tr("Log gradient norm"), this)),
      m_follow(new QCheckBox(tr("Follow"), this)),
      m_skipped(new QLabel(this)) {
  auto* controls = new QHBoxLayout(this);
  controls->setContentsMargins(0, 0, 0, 0);
  controls->addWidget(new QLabel(tr("X axis:"), this));
  m_axis->setObjectName(QStringLiteral("xAxisMode"));
  m_axis->addItems({tr("Step"), tr("Epoch"), tr("Wall time")});
  controls->addWidget(m_axis);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Smoothing:"), this));
  m_smoothing->setObjectName(QStringLiteral("smoothing"));
  m_smoothing->setRange(0, 99);
  m_smoothing->setValue(int(std::lround(smoothing * 100)));
  m_smoothing->setMaximumWidth(160);
  m_smoothing->setToolTip(tr("Exponential moving average of the step loss"));
  controls->addWidget(m_smoothing);
  controls->addWidget(m_smoothingText);
  controls->addSpacing(12);
  m_log->setObjectName(QStringLiteral("gradNormLog"));
  controls->addWidget(m_log);
  m_follow->setObjectName(QStringLiteral("follow"));
  m_follow->setChecked(true);
  m_follow->setToolTip(
      tr("Keep the newest points in view; zooming or panning a chart turns this off"));
  controls->addWidget(m_follow);
  controls->addStretch(1);
  // Shown once the charts fell behind and skipped step points (the run's files have them all).
  m_skipped->setObjectName(QStringLiteral("skippedPoints"));
  m_skipped->hide();
  controls->addWidget(m_skipped);

  connect(m_axis, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &DashboardControls::axisModeChosen);
  connect(m_smoothing, &QSlider::valueChanged, this,
          [this](int v) { Q_EMIT smoothingChosen(v / 100.0); });
  connect(m_log, &QCheckBox::toggled, this, &DashboardControls::logScaleToggled);
  connect(m_follow, &QCheckBox::toggled, this, &DashboardControls::followToggled);
}

void DashboardControls::showAxisMode(int mode) {
  if (m_axis->currentIndex() != mode) m_axis->setCurrentIndex(mode);
}

void DashboardControls::showSmoothing(double weight) {
  m_smoothingText->setText(QString::number(weight, 'f', 2));
  const int slider = int(std::lround(weight * 100));
  if (m_smoothing->value() != slider) {
    const QSignalBlocker block(m_smoothing);
    m_smoothing->setValue(slider);
  }
}

void DashboardControls::showLogScale(bool on) {
  if (m_log->isChecked() != on) m_log->setChecked(on);
}

void DashboardControls::showFollow(bool on) {
  if (m_follow->isChecked() != on) m_follow->setChecked(on);
}

void DashboardControls::addSkipped(std::int64_t points) {
  m_skippedPoints += points;
  if (m_skippedPoints <= 0) return;
  m_skipped->setText(tr("%n step point(s) not drawn", nullptr,
                        int(std::min<std::int64_t>(m_skippedPoints, 1 << 30))));
  m_skipped->setToolTip(
      tr("The charts fell behind training and skipped these steps; the run's metrics.csv and "
         "events.jsonl hold every step"));
  m_skipped->show();
}

void DashboardControls::forgetRun() {
  m_skippedPoints = 0;
  m_skipped->hide();
}

}  // namespace netsmith::ui
