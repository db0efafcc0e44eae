// The built-in tasks' evaluation views, by the names the tasks register under in core.
#include "evaluation/classification_view.h"
#include "evaluation/detection_view.h"
#include "evaluation/multilabel_view.h"
#include "evaluation/regression_view.h"
#include "evaluation/segmentation_view.h"
#include "evaluation/task_view.h"

namespace netsmith::ui {

void addBuiltinTaskViews(TaskViewRegistry& registry) {
  registry.add("classification", [](QWidget* parent) { return new ClassificationView(parent); });
  registry.add("multilabel", [](QWidget* parent) { return new MultiLabelView(parent); });
  registry.add("regression", [](QWidget* parent) { return new RegressionView(parent); });
  registry.add("segmentation", [](QWidget* parent) { return new SegmentationView(parent); });
  registry.add("detection", [](QWidget* parent) { return new DetectionView(parent); });
}

}  // namespace netsmith::ui
