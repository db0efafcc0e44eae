#include "train/trainability.h"

#include "common/shape.h"
#include "data/data_config.h"
#include "data/data_module.h"
#include "ops/op_registry.h"

namespace netsmith::train {

bool replacesHead(const Json& train) {
  return train.is_object() && train.contains("replace_head") &&
         train["replace_head"].is_boolean() && train["replace_head"].get<bool>();
}

std::optional<Problem> outputClassProblem(const graph::GraphAnalysis& a, std::int64_t numClasses) {
  if (!a.ok() || numClasses <= 0) return std::nullopt;
  const std::string classes = std::to_string(numClasses) + " classes";
  if (a.outputShape.size() != 1) {
    return Problem{
        "node \"" + a.outputId + "\"",
        "the model's output is " + formatShape(a.outputShape) +
            "; a classifier needs one score for each of the data's " + classes,
        a.outputId,
        "end the model with Flatten and a Linear of " + std::to_string(numClasses) + " outputs"};
  }
  if (a.outputShape[0] >= numClasses) return std::nullopt;
  // The Linear that makes the scores: the last one in the model.
  std::string linear;
  for (const auto& n : a.nodes)
    if (n.op == "Linear") linear = n.id;
  const std::string where = linear.empty() ? a.outputId : linear;
  Problem p{"node \"" + where + "\"",
            "the model outputs " + std::to_string(a.outputShape[0]) + " scores but the data has " +
                classes,
            where, ""};
  p.fix = linear.empty()
              ? "end the model with a Linear of " + std::to_string(numClasses) + " outputs"
              : "set " + linear + ".out_features to " + std::to_string(numClasses);
  return p;
}

Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const ops::OpRegistry& registry) {
  Problems problems;
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
  if (const auto p = outputClassProblem(analysis, module.numClasses());
      p && !replacesHead(project.train))
    problems.push_back(*p);
  return problems;
}

}  // namespace netsmith::train
