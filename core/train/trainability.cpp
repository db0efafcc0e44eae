#include "train/trainability.h"

#include "data/data_config.h"
#include "data/data_module.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "task/task.h"

#include <algorithm>

namespace netsmith::train {

bool replacesHead(const Json& train) {
  return train.is_object() && train.contains("replace_head") &&
         train["replace_head"].is_boolean() && train["replace_head"].get<bool>();
}

namespace {

/// The project's task as validation makes it: from the data's class count and the model's
/// output alone.
std::shared_ptr<task::Task> checkingTask(const task::TaskDef& def, const project::Project& project,
                                         const graph::GraphAnalysis& analysis,
                                         std::int64_t dataClasses,
                                         const std::vector<std::string>& targets) {
  task::TaskSetup setup;
  setup.dataClasses = dataClasses;
  setup.outputShape = analysis.outputShape;
  setup.inputShape = analysis.inputShape;
  setup.targets = targets;
  // The train section's keys a task checks when it is made (their own syntax is checked with
  // the section).
  const Json train = project.train.is_object() ? project.train : Json::object();
  const Json loss = train.value("loss", Json());
  if (loss.is_string() && loss != "auto") setup.loss = loss.get<std::string>();
  const Json smoothing = train.value("label_smoothing", Json());
  if (smoothing.is_number()) setup.labelSmoothing = smoothing.get<double>();
  const Json weights = train.value("class_weights", Json());
  if (weights == "auto") {
    setup.classWeights = "auto";
  } else if (weights.is_array()) {
    setup.classWeights = "explicit";
    for (const auto& w : weights)
      if (w.is_number()) setup.classWeightValues.push_back(w.get<double>());
  }
  return def.make(setup);
}

}  // namespace

Problems resolveMetrics(TrainOptions& options, const std::vector<task::FigureSpec>& figures,
                        const std::string& taskName) {
  Problems problems;
  const auto check = [&](MetricChoice& m, const std::string& key) {
    const std::string figure = m.figure();
    if (figure == "loss") {
      if (m.autoMode) m.maximize = false;
      return;
    }
    if (const auto* spec = task::findFigure(figures, figure)) {
      if (m.autoMode) m.maximize = spec->higherIsBetter;
      return;
    }
    std::string known = "loss";
    for (const auto& f : figures)
      known += ", " + f.name;
    problems.push_back({key,
                        "the task \"" + taskName + "\" has no figure \"" + figure +
                            "\" (it reports " + known + ", each as val_ or train_)",
                        {},
                        {}});
  };
  // Without train.monitor, "best" is the task's first figure on the validation split
  // (classification's val_accuracy).
  if (!options.monitorGiven && !figures.empty()) options.monitor.name = "val_" + figures[0].name;
  check(options.monitor, "train.monitor");
  if (options.earlyStopping.enabled)
    check(options.earlyStopping.metric, "train.early_stopping.metric");
  if (options.plateau.enabled) {
    check(options.plateau.metric, "train.plateau.metric");
    options.plateau.controller.maximize = options.plateau.metric.maximize;  // the way it counts
  }
  return problems;
}

Problems metricProblems(const project::Project& project, const graph::GraphAnalysis& analysis,
                        std::int64_t dataClasses, const Registries& registries,
                        const std::vector<std::string>& targets) {
  const auto* def = registries.tasks.find(project.task);
  Problems trainProblems;
  auto options = parseTrainOptions(project.train, registries.schedules, trainProblems);
  if (!def || !trainProblems.empty()) return {};  // reported where the task and section are
  try {
    const auto task = checkingTask(*def, project, analysis, dataClasses, targets);
    auto problems = resolveMetrics(options, task->figures(), task->name());
    // A sweep's objective too (its syntax is the sweep section's own check).
    const Json sweep = project.extra.value("sweep", Json());
    if (sweep.is_object() && sweep.contains("objective") && sweep["objective"].is_string()) {
      TrainOptions objective;
      objective.monitorGiven = true;
      if (parseMetricChoice(sweep["objective"].get<std::string>(), "auto", objective.monitor)) {
        for (auto p : resolveMetrics(objective, task->figures(), task->name())) {
          p.path = "sweep.objective";
          problems.push_back(std::move(p));
        }
      }
    }
    return problems;
  } catch (const Error&) {
    return {};  // the head rule's check reports a task that cannot be made
  }
}

std::optional<Problem> headProblem(const project::Project& project,
                                   const graph::GraphAnalysis& analysis, std::int64_t dataClasses,
                                   const task::TaskRegistry& tasks,
                                   const std::vector<std::string>& targets) {
  const auto* def = tasks.find(project.task);
  if (!def) return Problem{"task", task::unknownTaskMessage(tasks, project.task), {}, {}};
  if (replacesHead(project.train)) {
    if (data::targetTraits(def->target).outputPerClass) return std::nullopt;
    return Problem{"train.replace_head",
                   "gives the last Linear one output per class; the task " + def->name +
                       " has no classes: set the model's output instead",
                   {},
                   {}};
  }
  try {
    return checkingTask(*def, project, analysis, dataClasses, targets)->headProblem(analysis);
  } catch (const Error& e) {
    return Problem{"task", e.what(), {}, {}};
  }
}

Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const Registries& registries) {
  const auto& tasks = registries.tasks;
  const auto& registry = registries.ops;
  Problems problems;
  if (!tasks.find(project.task)) {
    problems.push_back({"task", task::unknownTaskMessage(tasks, project.task), {}, {}});
    return problems;
  }
  const auto analysis = graph::analyseGraph(project.model, registry);
  if (analysis.ok() && analysis.totalParams == 0) {
    problems.push_back({"model", "the model has nothing to train (no layer with parameters)",
                        analysis.outputId, "add layers after the Input, e.g. Flatten and Linear"});
  }
  // A model design without data: only the model is checked.
  if (!project.data.is_object() || project.data.empty()) return problems;
  Problems dataProblems;
  const auto config = data::parseDataConfig(project.data, baseDir, dataProblems);
  if (!dataProblems.empty()) {
    problems.insert(problems.end(), dataProblems.begin(), dataProblems.end());
    return problems;
  }
  if (const auto p = task::dataTargetProblem(tasks.get(project.task), config)) {
    problems.push_back({"data", *p, {}, {}});
    return problems;
  }
  const Json train = project.train.is_object() ? project.train : Json::object();
  if (const auto p = task::samplerProblem(tasks.get(project.task),
                                          train.value("sampler", Json()) == "balanced")) {
    problems.push_back({"train.sampler", *p, {}, {}});
    return problems;
  }
  data::DataModule module;
  try {
    module = data::openDataModule(config);
  } catch (const Error& e) {
    problems.push_back({"data", e.what(), {}, {}});
    return problems;
  }
  if (config.test && module.test.empty())
    problems.push_back({"data.test", "the test split has no samples", {}, {}});
  if (config.validation && module.validation.empty())
    problems.push_back({"data.validation", "the validation split has no samples", {}, {}});
  if (const auto p = headProblem(project, analysis, module.numClasses(), tasks, module.targets)) {
    problems.push_back(*p);
    return problems;
  }
  const auto metrics =
      metricProblems(project, analysis, module.numClasses(), registries, module.targets);
  problems.insert(problems.end(), metrics.begin(), metrics.end());
  return problems;
}

}  // namespace netsmith::train
