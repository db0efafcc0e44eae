#include "task/task_registry.h"

#include "common/error.h"
#include "data/source_formats.h"
#include "task/classification.h"
#include "task/detection.h"
#include "task/multilabel.h"
#include "task/regression.h"
#include "task/segmentation.h"
#include "task/target_statistics.h"
#include "task/task.h"

namespace netsmith::task {

namespace {

std::int64_t perClass(std::int64_t classes, std::int64_t) {
  return classes;
}

}  // namespace

TaskRegistry TaskRegistry::withBuiltins() {
  TaskRegistry r;
  r.add(TaskDef{kClassification,
                "single-label classification: one class per sample",
                "tasks",
                [](const TaskSetup& s) { return std::make_shared<ClassificationTask>(s); },
                classificationExportNotes(),
                data::TargetKind::ClassIndex,
                {},
                StarterRule{"small_resnet", perClass},
                "evaluation.md",
                ClassificationTask::figureSpecs()});
  r.add(TaskDef{"multilabel",
                "multi-label classification: a set of labels per sample",
                "tasks",
                [](const TaskSetup& s) { return std::make_shared<MultiLabelTask>(s); },
                multiLabelExportNotes(),
                data::TargetKind::MultiHot,
                {},
                StarterRule{"multilabel_cnn", perClass},
                "multi-label.md",
                MultiLabelTask::figureSpecs(),
                labelSetStatistics});
  r.add(TaskDef{
      "regression", "regression: numbers to predict per sample", "tasks",
      [](const TaskSetup& s) { return std::make_shared<RegressionTask>(s); },
      regressionExportNotes(), data::TargetKind::RealVector, foldTargetScaling,
      StarterRule{"regression_cnn", [](std::int64_t, std::int64_t targets) { return targets; }},
      "regression.md", RegressionTask::figureSpecs(), targetValueStatistics});
  r.add(TaskDef{"segmentation",
                "semantic segmentation: a class for every pixel",
                "tasks",
                [](const TaskSetup& s) { return std::make_shared<SegmentationTask>(s); },
                segmentationExportNotes(),
                data::TargetKind::ClassMask,
                {},
                StarterRule{"unet", perClass},
                "segmentation.md",
                SegmentationTask::figureSpecs(),
                maskPixelStatistics,
                "predictions"});
  r.add(TaskDef{"detection",
                "object detection: boxes around the objects of each image, with their classes",
                "tasks",
                [](const TaskSetup& s) { return std::make_shared<DetectionTask>(s); },
                detectionExportNotes(),
                data::TargetKind::Boxes,
                {},
                StarterRule{"detector",
                            [](std::int64_t classes, std::int64_t) {
                              return classes + 5;  // class scores, 4 box distances, centre-ness
                            }},
                "detection.md",
                DetectionTask::figureSpecs(),
                boxStatistics,
                "predictions.json"});
  return r;
}

data::TargetStatisticsFactory TaskRegistry::statisticsOf(const std::string& name) const {
  const auto* def = find(name);
  return def ? def->statistics : data::TargetStatisticsFactory{};
}

std::string defaultObjective(const TaskDef& def) {
  return def.figures.empty() ? std::string("val_loss") : "val_" + def.figures.front().name;
}

ExportNotes classificationExportNotes() {
  ExportNotes notes;
  notes.output = "logits";
  notes.outputDescription = "one score per class, in the order of the classes";
  notes.postprocessing =
      "the predicted class is the highest score; softmax gives probabilities (--softmax adds "
      "them as a second output, \"probabilities\")";
  notes.classScores = true;
  return notes;
}

std::optional<std::string> dataTargetProblem(const TaskDef& def, const data::DataConfig& data) {
  for (const auto* spec : {&data.train, data.validation ? &*data.validation : nullptr,
                           data.test ? &*data.test : nullptr}) {
    if (!spec) continue;
    const auto& format = data::sourceFormat(spec->format);
    if (format.targets == def.target) continue;
    std::string takes;
    for (const auto& f : data::sourceFormats())
      if (f.targets == def.target) takes += (takes.empty() ? "" : ", ") + f.name;
    return spec->path + ".format: " + format.name + " gives " +
           data::targetKindName(format.targets) + "; the task " + def.name + " takes " +
           data::targetKindName(def.target) +
           (takes.empty() ? std::string() : " (formats: " + takes + ")");
  }
  return std::nullopt;
}

std::optional<std::string> samplerProblem(const TaskDef& def, bool balanced) {
  if (!balanced || def.target == data::TargetKind::ClassIndex) return std::nullopt;
  return "train.sampler: \"balanced\" draws each class equally often, but the task " + def.name +
         "'s samples have " + data::targetKindName(def.target) +
         ", not one class each; use \"shuffle\"" +
         (def.target == data::TargetKind::MultiHot || def.target == data::TargetKind::ClassMask
              ? std::string(" (train.class_weights \"auto\" weighs the rare classes)")
              : std::string());
}

std::string unknownTaskMessage(const TaskRegistry& registry, const std::string& name) {
  if (registry.find(name)) return {};
  std::string known;
  for (const auto& n : registry.names())
    known += (known.empty() ? "" : ", ") + n;
  return "unknown task \"" + printable(name) + "\"; this program knows " + known;
}

void TaskRegistry::add(TaskDef def) {
  const std::string& output = def.exportNotes.output;
  if (output.empty() || output == "input" || output == "probabilities")
    throw Error("task \"" + def.name + "\": the export's output cannot be named \"" +
                printable(output) +
                "\" (the input is \"input\", --softmax adds \"probabilities\")");
  // train.monitor, early stopping and a sweep's objective are checked against these before
  // any task is made.
  if (def.figures.empty())
    throw Error("task \"" + printable(def.name) +
                "\": lists no figures (TaskDef::figures, its Task::figures() known before a task "
                "is made)");
  m_defs.add(std::move(def));
}

FigureSpec TaskRegistry::figureSpec(const std::string& name, const std::string& figure) const {
  const auto* def = find(name);
  if (figure.empty()) return def ? headlineSpecOf(def->figures) : FigureSpec{};
  const FigureSpec* known = def ? findFigure(def->figures, figure) : nullptr;
  if (known) return *known;
  FigureSpec spec;
  spec.name = figure;
  return spec;
}

const TaskDef& TaskRegistry::get(const std::string& name) const {
  const auto* def = find(name);
  if (!def) throw Error("task: " + unknownTaskMessage(*this, name));
  return *def;
}

std::shared_ptr<Task> TaskRegistry::make(const std::string& name, const TaskSetup& setup) const {
  return get(name).make(setup);
}

}  // namespace netsmith::task
