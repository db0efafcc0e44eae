#include "eval/evaluation.h"
#include "eval/evaluation_input.h"
#include "eval/evaluator.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <opencv2/imgproc.hpp>

#include "augment/transform.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_model.h"
#include "common/error.h"
#include "common/shape.h"
#include "data/data_loader.h"
#include "data/named_paths.h"
#include "data/project_data.h"
#include "data/sample_processor.h"
#include "export/onnx_model.h"
#include "graph/graph_analysis.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "resolve/open_data.h"
#include "resolve/resolved_project.h"
#include "task/task.h"
#include "task/task_registry.h"
#include "train/lr_schedule.h"
#include "train/run_setup.h"
#include "train/train_options.h"
#include "train/trainability.h"

namespace netsmith::eval {

cv::Mat evaluationPicture(const torch::Tensor& image, const std::vector<double>& mean,
                          const std::vector<double>& std, int side) {
  auto x = image.to(torch::kFloat).contiguous().clone();
  const auto channels = x.size(0);
  for (int64_t c = 0; c < channels; ++c) {
    const double s = c < int64_t(std.size()) ? std[std::size_t(c)] : 1.0;
    const double m = c < int64_t(mean.size()) ? mean[std::size_t(c)] : 0.0;
    x[c].mul_(s).add_(m);
  }
  x = x.clamp(0, 1).mul(255).round().to(torch::kUInt8).permute({1, 2, 0}).contiguous();
  const int h = int(x.size(0)), w = int(x.size(1));
  cv::Mat mat(h, w, channels == 1 ? CV_8UC1 : CV_8UC3, x.data_ptr<std::uint8_t>());
  cv::Mat out;
  const double scale = double(side) / double(std::max(h, w));
  if (scale < 1.0)
    cv::resize(mat, out, cv::Size(std::max(1, int(w * scale)), std::max(1, int(h * scale))), 0, 0,
               cv::INTER_AREA);
  else
    out = mat.clone();
  return out;
}

data::LoaderOptions evaluationLoaderOptions(const data::ProjectData& pd,
                                            const EvaluationOptions& options) {
  data::LoaderOptions lo;
  lo.batchSize = std::max<std::int64_t>(1, options.batchSize);
  lo.training = false;
  lo.shuffle = false;
  lo.onError = pd.data.config.onError;
  return lo;
}

bool keepEvaluating(const EvaluationOptions& options, std::int64_t done, std::int64_t total,
                    data::DataLoader& loader, Evaluation& out) {
  if (!options.progress || options.progress(done, total)) return true;
  loader.stop();
  out.cancelled = true;
  return false;
}

std::unique_ptr<task::PredictionWriter> predictionsFor(const task::Task& task,
                                                       const data::SampleSet& set,
                                                       const EvaluationOptions& options) {
  if (options.predictions.empty()) return nullptr;
  auto writer = task.predictionWriter(options.predictions, set);
  if (!writer) throw Error("--predictions: the task " + task.name() + " writes no predictions");
  return writer;
}

std::vector<const SampleOutcome*> Evaluation::cell(std::int64_t label,
                                                   std::int64_t predicted) const {
  std::vector<const SampleOutcome*> out;
  for (const auto& s : samples)
    if (s.label == label && s.predicted == predicted) out.push_back(&s);
  std::stable_sort(out.begin(), out.end(), [](const SampleOutcome* a, const SampleOutcome* b) {
    return a->loss > b->loss;
  });
  return out;
}

Json Evaluation::toJson() const {
  Json j = run::evalMetricsToJson(metrics);
  j["checkpoint"] = checkpoint;
  if (!onnx.empty()) j["onnx"] = onnx;
  j["runtime"] = runtime;
  j["split"] = split;
  j["task"] = task;
  if (evaluator) evaluator->addJson(*this, j);
  return j;
}

std::string Evaluation::report(const EvaluationFiles& files) const {
  return evaluator ? evaluator->report(*this, files) : std::string();
}

namespace {

/// The data to evaluate on: the checkpoint's own, another project's, or a folder of class
/// sub-folders, preprocessed exactly as in training, whole splits.
void resolveEvaluationData(const Json& meta, const std::string& dataPath, project::Project& project,
                           std::string& baseDir, bool keepValidation = false) {
  Json data = project.data;
  if (!dataPath.empty()) {
    if (std::filesystem::is_directory(dataPath)) {
      data = Json{{"train", Json{{"format", "image_folder"}, {"root", dataPath}}},
                  {"test", Json{{"format", "image_folder"}, {"root", dataPath}}}};
      baseDir = ".";
    } else {
      const auto other = project::loadProject(dataPath);
      data = other.project.data;
      baseDir = other.baseDir();
    }
    if (meta.contains("classes")) data["classes"] = meta["classes"];
  }
  // Preprocess exactly as in training.
  if (meta.contains("normalization")) {
    const Json& n = meta["normalization"];
    // A run without normalisation records empty lists.
    const bool none =
        n.is_object() && n.contains("mean") && n["mean"].is_array() && n["mean"].empty();
    data["normalize"] = none ? Json("none") : n;
  }
  if (!keepValidation) data.erase("validation");  // evaluate whole splits
  project.data = data;
  project.augment = Json::array();
}

/// What a checkpoint evaluation starts from: a checkpoint and its project snapshot, or a
/// project whose model has the weights of its init_from.
struct EvaluationSource {
  checkpoint::CheckpointData ckpt;
  project::LoadedProject loaded;
  std::string baseDir;
  graph::GraphModule net{nullptr};  ///< set here for a project; for a checkpoint, later
  bool fromProject = false;
};

/// Reads the checkpoint at `ckptPath`, or the project there with its init_from weights.
EvaluationSource readEvaluationSource(const std::string& ckptPath,
                                      const ops::OpRegistry& registry) {
  EvaluationSource src;
  src.fromProject = checkpoint::isProjectFile(ckptPath);
  if (src.fromProject) {
    // A project whose weights come from its init_from (an imported model, before training):
    // the user named the project, so its data is named too.
    auto pw = checkpoint::modelFromProjectWeights(ckptPath, registry);
    src.loaded = std::move(pw.loaded);
    src.baseDir = src.loaded.baseDir();
    src.net = std::move(pw.net);
  } else {
    src.ckpt = checkpoint::readCheckpoint(ckptPath);
    src.loaded = checkpoint::checkpointProject(src.ckpt, ckptPath);
    src.baseDir = data::checkpointBaseDir(src.ckpt.meta, ckptPath);
  }
  return src;
}

/// The checkpoint's task, made for this data and model with the run's own loss, label
/// smoothing and class weights (eval's loss is the loss the run reported: a Huber
/// regression's is Huber, not MSE). Errors name `ckptPath`.
std::shared_ptr<task::Task> makeEvaluationTask(const Registries& registries,
                                               const EvaluationSource& src,
                                               const resolve::ResolvedProject& resolved,
                                               const data::ProjectData& pd, const Json& state,
                                               const std::string& ckptPath) {
  task::TaskSetup setup =
      train::taskSetupFor(resolved.train, resolved.analysis, train::taskFacts(pd.data));
  setup.train = &pd.data.train;
  setup.state = state;
  std::shared_ptr<task::Task> task;
  try {
    const auto& def = registries.tasks.get(src.loaded.project.task);
    if (const auto p = task::dataTargetProblem(def, pd.data.config)) throw Error(*p);
    task = def.make(setup);
  } catch (const Error& e) {
    throw Error(ckptPath + ": " + e.what());
  }
  return task;
}

/// The exported file at `path`, loaded to run in the checkpoint's place; refused (naming both)
/// when it is not of the same model: another input or output shape, other classes.
checkpoint::LoadedModel exportedInPlaceOf(const EvaluationSource& src, const std::string& path,
                                          const std::string& ckptPath,
                                          const RegistriesPtr& registries) {
  auto exported = exporting::loadOnnxModel(path, registries);
  const auto& a = src.net->analysis();
  const auto b = graph::analyseGraph(exported.project.model, *exported.registry);
  const auto ckptClasses = src.ckpt.meta.value("classes", Json::array());
  if (a.inputShape != b.inputShape || a.outputShape != b.outputShape ||
      (src.ckpt.meta.contains("classes") && Json(exported.classes) != ckptClasses))
    throw Error(path + ": not an export of " + ckptPath + " (its input " +
                formatShape(b.inputShape) + ", output " + formatShape(b.outputShape) +
                " or classes differ from the checkpoint's " + formatShape(a.inputShape) + ", " +
                formatShape(a.outputShape) + ")");
  return exported;
}

/// The split to evaluate (not empty), cut to a stratified subset of options.limit samples
/// when it is larger.
data::SampleSet evaluationSamples(const data::DataModule& d, const std::string& split,
                                  const EvaluationOptions& options) {
  data::SampleSet set = split == "train" ? d.train : split == "validation" ? d.validation : d.test;
  if (set.empty()) throw Error("the " + split + " split is empty");
  if (options.limit > 0 && set.size() > options.limit) {
    const auto& source = *set.source;
    set.indices = data::stratifiedSubset(
        set.indices, [&](std::int64_t i) { return source.stratum(i); }, source.numStrata(),
        options.limit, 0);
  }
  return set;
}

}  // namespace

Evaluation evaluateCheckpoint(const EvaluationOptions& options) {
  const std::string& ckptPath = options.checkpoint;
  const auto& registries = needRegistries(options.registries, "EvaluationOptions");
  const auto& registry = registries.ops;
  EvaluationSource src = readEvaluationSource(ckptPath, registry);
  // The checkpoint's own data is read only from paths the user named (see data/named_paths.h).
  if (!src.fromProject && options.data.empty() && !options.dataFromCheckpoint) {
    const std::string home = data::checkpointHome(ckptPath);
    const auto unnamed = data::unnamedDataPaths(src.loaded.project.data, src.baseDir, home);
    if (!unnamed.empty())
      throw data::UnnamedDataError(data::unnamedDataMessage(ckptPath, home, unnamed), unnamed);
  }
  // Temperature scaling is fitted on the validation split as training made it.
  project::Project fitProject = src.loaded.project;
  std::string fitBaseDir = src.baseDir;
  if (options.fitTemperature)
    resolveEvaluationData(src.ckpt.meta, options.data, fitProject, fitBaseDir, true);
  // The validation split as training made it (the run's fraction and seed), when asked for.
  resolveEvaluationData(src.ckpt.meta, options.data, src.loaded.project, src.baseDir,
                        options.split == "validation");

  torch::manual_seed(0);
  if (!src.fromProject)
    src.net = checkpoint::modelFromCheckpoint(src.loaded.project, src.ckpt, ckptPath, registry);
  // The project as evaluated (its data perhaps from elsewhere), read once.
  resolve::ResolveOptions how;
  how.analysis = &src.net->analysis();
  how.baseDir = src.baseDir;
  const auto resolved = resolve::resolveProject(src.loaded, registries, how);
  src.net->eval();
  ModelRun run = [&net = *src.net](const torch::Tensor& x) { return net.forward(x); };
  Json state = src.ckpt.meta.value("task_state", Json());
  checkpoint::LoadedModel exported;
  if (!options.onnx.empty()) {
    if (options.features)
      throw Error("--onnx: an exported file gives its outputs only, no penultimate features");
    exported = exportedInPlaceOf(src, options.onnx, ckptPath, options.registries);
    run = exported.runner;
    state = exported.taskState;  // as it applies to the file's output (a folded scaling)
  }
  auto pd = resolve::openData(resolved, registries.transforms, "");
  if (!pd) throw Error("cancelled");
  Evaluation out;
  out.checkpoint = ckptPath;
  out.split = options.split.empty() ? (pd->data.test.empty() ? "train" : "test") : options.split;
  if (out.split != "train" && out.split != "test" && out.split != "validation")
    throw Error("the split must be test, validation or train, not \"" + out.split + "\"");
  out.classes = pd->data.classes;
  out.targets = pd->data.targets;
  out.colors = pd->data.config.colors;
  // The checkpoint's task, made for this data and model: its head rule decides whether the
  // model fits the data, its target whether the class view applies.
  const std::shared_ptr<task::Task> task =
      makeEvaluationTask(registries, src, resolved, *pd, state, ckptPath);
  out.onnx = options.onnx;
  out.runtime = exported.runtime;  // "LibTorch" unless an exported file was loaded
  out.task = task->name();
  // The task's evaluator, which first refuses what it cannot give.
  const auto evaluator = registries.evaluators.forTask(out.task);
  evaluator->check(options, out.task);
  out.evaluator = evaluator;
  if (const auto p = task->headProblem(src.net->analysis())) {
    throw Error(ckptPath + ": the checkpoint's model does not fit this data: " + p->message +
                (options.data.empty() ? "" : " (from " + options.data + ")"));
  }
  data::SampleSet set = evaluationSamples(pd->data, out.split, options);
  evaluator->evaluate(
      EvaluationInput{src.net.get(), run, &set, pd.get(), task, &options, &src.loaded.project,
                      [&]() {
                        return data::openProjectData(fitProject, fitBaseDir, registries.transforms,
                                                     "");
                      },
                      ckptPath},
      out);
  return out;
}

EvaluatorRegistry EvaluatorRegistry::withBuiltins() {
  EvaluatorRegistry r;
  r.add(task::kClassification, classViewEvaluator());
  return r;
}

void EvaluatorRegistry::add(const std::string& task, std::shared_ptr<const Evaluator> evaluator) {
  m_byTask[task] = std::move(evaluator);
}

std::shared_ptr<const Evaluator> EvaluatorRegistry::forTask(const std::string& task) const {
  const auto it = m_byTask.find(task);
  return it != m_byTask.end() ? it->second : figureEvaluator();
}

}  // namespace netsmith::eval
