#include "shell/run_status.h"

#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>

#include <cmath>

#include "env/env_report.h"
#include "run/events.h"
#include "util/elided_label.h"

namespace netsmith::ui {

namespace {

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("?");
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600)
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QString deviceText() {
  const auto env = env::collectEnvReport(false);
  if (env.cudaAvailable)
    return RunStatus::tr("CUDA: %1")
        .arg(QString::fromStdString(env.cudaDevices.empty() ? std::string("?")
                                                            : env.cudaDevices[0]));
  return RunStatus::tr("CPU, %1 threads%2")
      .arg(env.intraOpThreads)
      .arg(env.blasIsReference ? RunStatus::tr(" (reference BLAS: slow)") : QString());
}

}  // namespace

RunStatus::RunStatus(QStatusBar* bar)
    : QObject(bar),
      m_device(new QLabel(deviceText(), bar)),
      m_state(new ElidedLabel(tr("Idle"), bar)),
      m_toEvaluation(new QToolButton(bar)),
      m_progress(new QProgressBar(bar)) {
  m_device->setObjectName(QStringLiteral("deviceLabel"));
  m_state->setObjectName(QStringLiteral("runState"));
  // After a run: a link to where its figures are, instead of a command to type.
  m_toEvaluation->setObjectName(QStringLiteral("showEvaluation"));
  m_toEvaluation->setText(tr("Show the evaluation"));
  m_toEvaluation->setToolTip(
      tr("The Evaluation page: confusion matrix, per-class figures, samples"));
  m_toEvaluation->setAutoRaise(true);
  m_toEvaluation->hide();
  connect(m_toEvaluation, &QToolButton::clicked, this, &RunStatus::evaluationRequested);
  m_progress->setObjectName(QStringLiteral("runProgress"));
  m_progress->setMaximumWidth(260);
  // One width whatever it says (ETA, paused, testing): the status bar does not jump.
  m_progress->setMinimumWidth(
      m_progress->fontMetrics().horizontalAdvance(QStringLiteral("100% (ETA 00:00:00)")) + 24);
  m_progress->setFormat(QStringLiteral("%p%"));
  m_progress->setValue(0);
  // A message (Opened, Saved, an error) hides the run state for its seconds instead of being
  // drawn over it (QStatusBar hides normal widgets itself only when they are already visible).
  bar->addWidget(m_state, 1);
  connect(bar, &QStatusBar::messageChanged, m_state,
          [this](const QString& message) { m_state->setVisible(message.isEmpty()); });
  bar->addPermanentWidget(m_toEvaluation);
  bar->addPermanentWidget(m_progress);
  bar->addPermanentWidget(m_device);
}

QString RunStatus::text() const {
  return m_state->fullText();
}

void RunStatus::setText(const QString& text) {
  m_state->setFullText(text);
}

void RunStatus::requested(const QString& what) {
  setText(what);
  m_progress->setValue(0);
}

void RunStatus::started(const QString& what) {
  m_toEvaluation->hide();
  m_firstStep = -1;
  setText(what);
}

void RunStatus::showBatches(const QVector<run::BatchMetrics>& list, bool paused) {
  const auto& b = list.back();
  if (m_firstStep < 0) {
    m_firstStep = list.front().step - 1;
    m_firstRunSeconds = list.front().runSeconds;
  }
  const double done = double(b.step - m_firstStep);
  const double left = double(b.totalSteps - b.step);
  const double eta = done > 0 ? (b.runSeconds - m_firstRunSeconds) / done * left : NAN;
  m_progress->setMaximum(int(std::max<std::int64_t>(1, b.totalSteps)));
  m_progress->setValue(int(b.step));
  m_progress->setFormat(paused ? tr("%p% (paused)") : tr("%p% (ETA %1)").arg(formatDuration(eta)));
  if (!paused)
    setText(tr("Training: epoch %1, batch %2/%3, %4 images/s")
                .arg(b.epoch + 1)
                .arg(b.batch + 1)
                .arg(b.batchesPerEpoch)
                .arg(b.imagesPerSecond, 0, 'f', 0));
}

void RunStatus::showPaused() {
  setText(tr("Paused"));
  m_progress->setFormat(tr("%p% (paused)"));  // no running ETA while nothing runs
}

void RunStatus::showTesting(const QString& text) {
  setText(tr("Testing: %1").arg(text));
  m_progress->setRange(0, 0);
}

void RunStatus::showFinished(const QString& text, bool completed, bool offerEvaluation) {
  if (m_progress->maximum() == 0) {  // it showed the test pass as busy
    m_progress->setRange(0, 1);
    m_progress->setValue(completed ? 1 : 0);
  }
  setText(text);
  m_progress->setFormat(QStringLiteral("%p%"));
  m_toEvaluation->setVisible(offerEvaluation);
}

void RunStatus::clear() {
  m_toEvaluation->hide();
  setText(tr("Idle"));
  m_progress->reset();
}

}  // namespace netsmith::ui
