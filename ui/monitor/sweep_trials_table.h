#pragma once

// The Experiments page's live table of a sweep's trials: one row per trial (its id, status,
// epochs, objective, time and the settings it drew), sortable; best on top at first, then as
// the user sorts it.
#include <QTableWidget>

namespace netsmith::experiment {
struct SweepSpec;
struct SweepState;
}  // namespace netsmith::experiment

namespace netsmith::ui {

class SweepTrialsTable : public QTableWidget {
  Q_OBJECT

 public:
  explicit SweepTrialsTable(QWidget* parent = nullptr);

  /// A row per trial of `state`, with a column per setting of `spec`. `live`: a process runs
  /// the sweep now; else the trials its record keeps running read "interrupted" and their
  /// time stands still.
  void showTrials(const experiment::SweepState& state, const experiment::SweepSpec& spec,
                  bool live);
  /// The Time column of the trials under way, counted on to now (between polls that change).
  void showTrialTimes(const experiment::SweepState& state, bool live);

 private:
  bool m_sorted = false;  ///< sorted by the objective once; then as the user sorts it
};

}  // namespace netsmith::ui
