#pragma once

// `netsmith PROJECT --screenshots DIR [--train]`: grabs of the window's pages for the
// documentation, taken by the program itself (also under the offscreen platform), then quits.
#include <QString>

namespace netsmith::ui {
class MainWindow;
}

/// Without `train`: the Model (editor-<project>.png), Data, Augment and Training pages. With it:
/// starts training, grabs the dashboard during (training.png) and after (finished.png) the run,
/// then the Runs and Evaluation pages; then every page at 1280x720 and 1920x1080, light and dark
/// (DIR/<w>x<h>-<theme>/<page>.png).
void scheduleScreenshots(netsmith::ui::MainWindow& window, const QString& dir, bool train);

/// Starts the project's sweep from the Experiments page (with the window's sample limits), and
/// once running trials have points on the dashboard grabs the Experiments page
/// (experiments-running.png) and the dashboard (dashboard-sweep.png); then stops the sweep and
/// quits.
void scheduleSweepScreenshots(netsmith::ui::MainWindow& window, const QString& dir);
