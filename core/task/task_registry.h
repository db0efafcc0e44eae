#pragma once

// The tasks a program knows, by the name a project's "task" key gives ("classification" when
// absent). Built by the program and passed along (TrainerConfig::tasks), like the op and
// transform registries: a test or a plug-in adds its own. No LibTorch here.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/named_registry.h"
#include "data/data_config.h"
#include "data/target_summary.h"
#include "task/figures.h"

namespace netsmith::data {
struct SampleSet;
}
namespace netsmith::checkpoint {
struct LoadedModel;
}

namespace netsmith::task {

class Task;

/// The task of a project without a "task" key (every project and checkpoint written before
/// tasks had names).
inline constexpr char kClassification[] = "classification";

/// What a run knows when it makes its task. Validation makes one from the data's classes and
/// the model's output alone (`train` null).
struct TaskSetup {
  std::vector<std::string> classes;  ///< the data's classes (may be empty)
  std::int64_t dataClasses = 0;
  std::vector<std::int64_t> outputShape;  ///< the model's output per sample (empty: unknown)
  std::vector<std::int64_t> inputShape;   ///< the model's input per sample (empty: unknown)
  double labelSmoothing = 0;              ///< train.label_smoothing
  std::string loss;                       ///< train.loss ("": the task's default)
  std::vector<std::string> targets;       ///< a regression's target names (data.targets)
  /// What a trained task recorded (Task::state(), kept in the checkpoint): a regression's
  /// target scaling. Null: a new run, which measures it on `train`.
  Json state;
  std::string classWeights = "none";       ///< train.class_weights: none, auto, explicit
  std::vector<double> classWeightValues;   ///< explicit weights
  const data::SampleSet* train = nullptr;  ///< the training split (for weights from counts)
};

/// What an export adds for a task: its output and how to read it (the ONNX output's name, the
/// export's metadata and report; the name is neither "input" nor "probabilities"). The same for
/// every project of the task, so known without a Task made from data.
struct ExportNotes {
  std::string output = "logits";  ///< the ONNX output's name
  std::string outputDescription;  ///< "one score per class (softmax for probabilities)"
  std::string postprocessing;     ///< what a consumer does with it, for the export report
  /// The output is one score per class: --softmax may add "probabilities".
  bool classScores = false;
  /// The output is a detection head (task/detection_head.h): --decoder and --nms may decode it
  /// in the ONNX graph, and model.py gets decode().
  bool boxDecoder = false;
};

/// Classification's: "logits", one score per class.
ExportNotes classificationExportNotes();

/// How a project made from a user's data starts (import/project_starter.h): the template its
/// model comes from, and the width of that model's last layer for the data (a classifier's
/// Linear: one unit per class; a detector's 1x1 convolution: the class scores and 5 more).
struct StarterRule {
  std::string templateName;
  std::function<std::int64_t(std::int64_t classes, std::int64_t targets)> outputs;
};

struct TaskDef {
  std::string name;
  std::string description;
  std::string group = "tasks";
  /// Throws netsmith::Error naming the project key when the setup does not fit the task.
  std::function<std::shared_ptr<Task>(const TaskSetup&)> make;
  ExportNotes exportNotes;
  /// What its samples' targets are: the data's source formats must give this kind.
  data::TargetKind target = data::TargetKind::ClassIndex;
  /// Makes a loaded model's output what the export notes say before any exporter runs (a
  /// regression folds its target scaling into the last layer). Throws netsmith::Error naming
  /// the node when it cannot. None: the model exports as it is.
  std::function<void(checkpoint::LoadedModel&)> prepareExport;
  StarterRule starter;
  /// Its page of the user guide (docs/guide/), which the studio opens for it.
  std::string guidePage = "README.md";
  /// The figures its evaluator reports (Task::figures(), known before a task is made): what a
  /// sweep's objective or train.monitor can name, as val_<name> or train_<name>; the first is
  /// the headline.
  std::vector<FigureSpec> figures;
  /// What `data-stats` and the Data page count of its training targets (data/target_summary.h).
  /// None: the data holds one class per sample, counted per class and split by the scan.
  data::TargetStatisticsFactory statistics;
  /// Where `predict` writes its predictionWriter()'s output when no --out is given: a CSV
  /// file, a folder (segmentation's masks) or a COCO results file (detection's).
  std::string predictionsName = "predictions.csv";
};

/// What "best" means for the task when nothing says: its headline figure on the validation
/// split ("val_accuracy", "val_map"), as train.monitor's default and a new sweep's objective.
std::string defaultObjective(const TaskDef& def);

/// Why `data`'s sources cannot feed the task `def` ("data.train.format: multilabel_csv gives a
/// set of labels per sample; the task classification takes one class per sample ..."), or
/// nothing when they can.
std::optional<std::string> dataTargetProblem(const TaskDef& def, const data::DataConfig& data);

/// Why train.sampler "balanced" cannot draw the task `def`'s samples by class (its samples have
/// no single class), or nothing when it can (or `balanced` is false).
std::optional<std::string> samplerProblem(const TaskDef& def, bool balanced);

class TaskRegistry {
 public:
  static TaskRegistry withBuiltins();
  /// Throws netsmith::Error when the task's export output is named "", "input" or
  /// "probabilities" (the exported file's input and --softmax's output).
  void add(TaskDef def);
  const TaskDef* find(const std::string& name) const { return m_defs.find(name); }
  /// The task `name`; throws netsmith::Error ("task: unknown task ...") for a name this program
  /// does not know.
  const TaskDef& get(const std::string& name) const;
  std::vector<std::string> names() const { return m_defs.names(); }
  /// The task `name` for `setup`; throws netsmith::Error ("task: unknown task ...") for a name
  /// this program does not know.
  std::shared_ptr<Task> make(const std::string& name, const TaskSetup& setup) const;
  /// The statistics of the task `name`'s training targets (TaskDef::statistics); none for a
  /// task without them or a name this program does not know.
  data::TargetStatisticsFactory statisticsOf(const std::string& name) const;
  /// The task `name`'s figure `figure` ("": its headline, the first), as the task describes it
  /// (its way, whether it is a share); a spec with only the figure's name when the task or the
  /// figure is unknown to this program.
  FigureSpec figureSpec(const std::string& name, const std::string& figure = {}) const;

 private:
  NamedRegistry<TaskDef> m_defs;
};

/// "task: unknown task "x"; this program knows classification" (empty when known).
std::string unknownTaskMessage(const TaskRegistry& registry, const std::string& name);

}  // namespace netsmith::task
