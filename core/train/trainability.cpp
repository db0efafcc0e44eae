#include "train/trainability.h"

#include "task/task.h"

namespace netsmith::train {

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

std::optional<Problem> headProblem(const std::string& taskName, const TrainOptions& options,
                                   const graph::GraphAnalysis& analysis, const TaskFacts& facts,
                                   const task::TaskRegistry& tasks) {
  const auto* def = tasks.find(taskName);
  if (!def) return Problem{"task", task::unknownTaskMessage(tasks, taskName), {}, {}};
  if (options.replaceHead) {
    if (data::targetTraits(def->target).outputPerClass) return std::nullopt;
    return Problem{"train.replace_head",
                   "gives the last Linear one output per class; the task " + def->name +
                       " has no classes: set the model's output instead",
                   {},
                   {}};
  }
  try {
    return def->make(taskSetupFor(options, analysis, facts))->headProblem(analysis);
  } catch (const Error& e) {
    return Problem{"task", e.what(), {}, {}};
  }
}

}  // namespace netsmith::train
