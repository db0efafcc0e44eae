#include "train/trainability.h"

#include "data/data_config.h"
#include "data/data_module.h"
#include "ops/op_registry.h"
#include "task/task.h"

namespace netsmith::train {

bool replacesHead(const Json& train) {
  return train.is_object() && train.contains("replace_head") &&
         train["replace_head"].is_boolean() && train["replace_head"].get<bool>();
}

std::optional<Problem> headProblem(const project::Project& project,
                                   const graph::GraphAnalysis& analysis, std::int64_t dataClasses,
                                   const task::TaskRegistry& tasks) {
  const auto* def = tasks.find(project.task);
  if (!def) return Problem{"task", task::unknownTaskMessage(tasks, project.task), {}, {}};
  if (replacesHead(project.train)) return std::nullopt;
  task::TaskSetup setup;
  setup.dataClasses = dataClasses;
  setup.outputShape = analysis.outputShape;
  try {
    return def->make(setup)->headProblem(analysis);
  } catch (const Error& e) {
    return Problem{"task", e.what(), {}, {}};
  }
}

Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const ops::OpRegistry& registry, const task::TaskRegistry& tasks) {
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
  if (const auto p = headProblem(project, analysis, module.numClasses(), tasks))
    problems.push_back(*p);
  return problems;
}

}  // namespace netsmith::train
