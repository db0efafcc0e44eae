#include "monitor/sweep_trials_table.h"

#include <QDateTime>
#include <QHeaderView>
#include <algorithm>
#include <cmath>

#include "experiment/sweep_spec.h"
#include "experiment/sweep_state.h"
#include "monitor/sweep_text.h"
#include "util/number_item.h"

namespace netsmith::ui {

namespace {

/// A trial's time: its ended segments, and while the sweep runs the segment under way.
double trialSeconds(const experiment::Trial& t, bool live) {
  if (!live || t.status != experiment::TrialStatus::Running || !(t.segmentStarted > 0))
    return t.seconds;
  const double now = double(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
  // A clock set back, or a record from elsewhere, never makes it count down or leap ahead.
  return t.seconds + std::clamp(now - t.segmentStarted, 0.0, 366.0 * 24 * 3600);
}

}  // namespace

SweepTrialsTable::SweepTrialsTable(QWidget* parent) : QTableWidget(parent) {
  setObjectName(QStringLiteral("sweepTrialsTable"));
  verticalHeader()->hide();
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSortingEnabled(true);
}

void SweepTrialsTable::showTrialTimes(const experiment::SweepState& state, bool live) {
  const bool sorted = isSortingEnabled();
  setSortingEnabled(false);  // rows stay put while their cells change
  for (int row = 0; row < rowCount(); ++row) {
    const auto* id = item(row, 0);
    auto* time = dynamic_cast<NumberItem*>(item(row, 4));
    if (!id || !time) continue;
    const auto k = std::size_t(id->text().toLongLong());
    if (k >= state.trials.size() || state.trials[k].id != std::int64_t(k)) continue;
    const double seconds = trialSeconds(state.trials[k], live);
    time->setText(QStringLiteral("%1 s").arg(std::llround(seconds)));
    time->setData(Qt::UserRole, seconds);
  }
  setSortingEnabled(sorted);
}

void SweepTrialsTable::showTrials(const experiment::SweepState& state,
                                  const experiment::SweepSpec& spec, bool live) {
  QStringList headers{tr("Trial"), tr("Status"), tr("Epochs"),
                      QString::fromStdString(spec.objective), tr("Time")};
  for (const auto& p : spec.params)
    headers << QString::fromStdString(p.path);
  const int sortColumn = horizontalHeader()->sortIndicatorSection();
  const auto order = horizontalHeader()->sortIndicatorOrder();
  setSortingEnabled(false);
  clear();
  setColumnCount(headers.size());
  setHorizontalHeaderLabels(headers);
  setRowCount(int(state.trials.size()));
  for (int row = 0; row < int(state.trials.size()); ++row) {
    const auto& t = state.trials[std::size_t(row)];
    setItem(row, 0, new NumberItem(QString::number(t.id), double(t.id)));
    // A trial left "running" by a sweep that no process runs any more was interrupted: the
    // record keeps it running so that running the sweep again resumes it.
    const bool interrupted =
        !live && !state.finished && t.status == experiment::TrialStatus::Running;
    auto* status = new QTableWidgetItem(
        interrupted ? tr("interrupted")
                    : QString::fromStdString(experiment::trialStatusName(t.status)));
    status->setToolTip(interrupted ? tr("The sweep stopped before this trial ended; run the sweep "
                                        "again to resume it from its checkpoint")
                                   : QString::fromStdString(t.error.empty() ? t.note : t.error));
    setItem(row, 1, status);
    setItem(row, 2,
            new NumberItem(QStringLiteral("%1/%2").arg(t.epochsDone).arg(t.maxEpochs),
                           double(t.epochsDone)));
    const double obj = t.objective();
    setItem(row, 3, new NumberItem(objectiveText(obj, spec.objective), obj));
    const double seconds = trialSeconds(t, live);
    setItem(row, 4, new NumberItem(QStringLiteral("%1 s").arg(std::llround(seconds)), seconds));
    for (int c = 0; c < int(spec.params.size()); ++c) {
      const auto it = t.params.find(spec.params[std::size_t(c)].path);
      const Json v = it == t.params.end() ? Json() : it->second;
      setItem(row, 5 + c,
              new NumberItem(sweepValueText(v), v.is_number() ? v.get<double>() : double(c)));
    }
  }
  setSortingEnabled(true);
  if (!m_sorted) {  // at first the best trial on top; then as the user sorts it
    m_sorted = true;
    sortByColumn(3, spec.maximize ? Qt::DescendingOrder : Qt::AscendingOrder);
  } else {
    sortByColumn(sortColumn < headers.size() ? sortColumn : 0, order);
  }
  resizeColumnsToContents();
}

}  // namespace netsmith::ui
