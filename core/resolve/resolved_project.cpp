#include "resolve/resolved_project.h"

#include "data/data_module.h"
#include "data/project_data.h"
#include "registries/registries.h"
#include "train/trainability.h"

namespace netsmith::resolve {

bool ResolvedProject::hasDataSection() const {
  const Json& d = loaded.project.data;
  return !(d.is_object() && d.empty());
}

Problems ResolvedProject::problems() const {
  Problems all = structure;
  for (const auto* part : {&dataProblems, &trainProblems, &sweepProblems})
    all.insert(all.end(), part->begin(), part->end());
  return all;
}

std::vector<std::string> ResolvedProject::namedTargets() const {
  return data ? data->targets : std::vector<std::string>{};
}

namespace {

/// The train section's metrics and the sweep's objective against the task's figures.
Problems resolveMetrics(ResolvedProject& r) {
  if (!r.task || !r.trainProblems.empty()) return {};
  const auto& figures = r.task->figures;
  auto problems = train::resolveMetrics(r.train, figures, r.task->name);
  // The sweep's objective (its syntax is the sweep section's own check).
  const Json sweep = r.project().extra.value("sweep", Json());
  if (sweep.is_object() && sweep.contains("objective") && sweep["objective"].is_string()) {
    train::TrainOptions objective;
    objective.monitorGiven = true;
    if (train::parseMetricChoice(sweep["objective"].get<std::string>(), "auto",
                                 objective.monitor)) {
      for (auto p : train::resolveMetrics(objective, figures, r.task->name)) {
        p.path = "sweep.objective";
        problems.push_back(std::move(p));
      }
    }
  }
  return problems;
}

}  // namespace

ResolvedProject resolveProject(project::LoadedProject loaded, const Registries& registries,
                               const ResolveOptions& options) {
  ResolvedProject r;
  r.loaded = std::move(loaded);
  r.baseDir = options.baseDir.empty() ? r.loaded.baseDir() : options.baseDir;
  const auto& p = r.loaded.project;
  r.analysis = options.analysis ? *options.analysis : graph::analyseGraph(p.model, registries.ops);
  r.structure = r.loaded.problems;
  r.structure.insert(r.structure.end(), r.analysis.problems.begin(), r.analysis.problems.end());
  r.task = registries.tasks.find(p.task);

  r.dataProblems = data::validateDataSections(p, r.baseDir, registries.transforms,
                                              options.pathsMustExist, &r.data);

  r.train = train::parseTrainOptions(p.train, registries.schedules, r.trainProblems);
  if (p.extra.contains("sweep"))
    r.sweep = experiment::parseSweep(p.extra["sweep"], p, r.sweepProblems, registries);
  r.metricProblems = resolveMetrics(r);
  return r;
}

std::optional<Problem> headProblem(const ResolvedProject& project, const train::TaskFacts& facts,
                                   const Registries& registries) {
  return train::headProblem(project.project().task, project.train, project.analysis, facts,
                            registries.tasks);
}

Problems trainableProblems(const ResolvedProject& r, const Registries& registries) {
  Problems problems;
  if (!r.task) {
    problems.push_back(
        {"task", task::unknownTaskMessage(registries.tasks, r.project().task), {}, {}});
    return problems;
  }
  if (r.analysis.ok() && r.analysis.totalParams == 0) {
    problems.push_back({"model", "the model has nothing to train (no layer with parameters)",
                        r.analysis.outputId,
                        "add layers after the Input, e.g. Flatten and Linear"});
  }
  // A model design without data: only the model is checked.
  if (!r.hasDataSection()) return problems;
  if (!r.data) {
    for (const auto& p : r.dataProblems)
      if (p.path.rfind("data", 0) == 0) problems.push_back(p);
    return problems;
  }
  if (const auto p = task::dataTargetProblem(*r.task, *r.data)) {
    problems.push_back({"data", *p, {}, {}});
    return problems;
  }
  if (const auto p = task::samplerProblem(*r.task, r.train.balancedSampler)) {
    problems.push_back({"train.sampler", *p, {}, {}});
    return problems;
  }
  data::DataModule module;
  try {
    module = data::openDataModule(*r.data);
  } catch (const Error& e) {
    problems.push_back({"data", e.what(), {}, {}});
    return problems;
  }
  if (r.data->test && module.test.empty())
    problems.push_back({"data.test", "the test split has no samples", {}, {}});
  if (r.data->validation && module.validation.empty())
    problems.push_back({"data.validation", "the validation split has no samples", {}, {}});
  const train::TaskFacts facts{module.numClasses(), module.classes, module.targets};
  if (const auto p = headProblem(r, facts, registries)) {
    problems.push_back(*p);
    return problems;
  }
  problems.insert(problems.end(), r.metricProblems.begin(), r.metricProblems.end());
  return problems;
}

Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const Registries& registries) {
  project::LoadedProject loaded;
  loaded.project = project;
  ResolveOptions options;
  options.baseDir = baseDir;
  return trainableProblems(resolveProject(std::move(loaded), registries, options), registries);
}

}  // namespace netsmith::resolve
