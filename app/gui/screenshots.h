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
