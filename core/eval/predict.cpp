#include "eval/predict.h"

#include <torch/torch.h>

#include <filesystem>

#include "checkpoint/loaded_model.h"
#include "common/error.h"
#include "data/data_module.h"
#include "data/project_data.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "task/task.h"
#include "task/task_registry.h"
#include "train/task_setup.h"

namespace netsmith::eval {

namespace {

namespace fs = std::filesystem;

/// The model's task, made from what its checkpoint recorded (classes, targets, task state)
/// and its project's train section: no data is read.
std::shared_ptr<task::Task> predictionTask(const Registries& registries,
                                           const checkpoint::LoadedModel& model) {
  resolve::ResolveOptions how;
  how.analysis = &model.net->analysis();
  how.baseDir = model.baseDir;
  const auto resolved =
      resolve::resolveProject(project::LoadedProject{model.project, {}, ""}, registries, how);
  train::TaskFacts facts{std::int64_t(model.classes.size()), model.classes, {}};
  const Json targets =
      model.taskState.is_object() ? model.taskState.value("targets", Json()) : Json();
  if (targets.is_array())
    for (const auto& t : targets)
      if (t.is_string()) facts.targets.push_back(t.get<std::string>());
  task::TaskSetup setup = train::taskSetupFor(resolved.train, resolved.analysis, facts);
  setup.state = model.taskState;
  try {
    auto task = registries.tasks.get(model.project.task).make(setup);
    if (const auto p = task->headProblem(resolved.analysis))
      throw Error("the model's output does not fit its task: " + p->message);
    return task;
  } catch (const Error& e) {
    throw Error(model.source + ": " + e.what());
  }
}

/// The preprocessing eval gives a split (eval/evaluation.cpp): the model's input, the data's
/// fit, the run's normalisation, no augmentation.
std::unique_ptr<data::ProjectData> evaluationProcessing(const Registries& registries,
                                                        const checkpoint::LoadedModel& model) {
  auto pd = std::make_unique<data::ProjectData>();
  const auto& input = model.project.model.input;
  pd->format =
      data::SampleFormat{int(input.channels), int(input.height), int(input.width), model.fit};
  pd->normalization.mean = model.mean;
  pd->normalization.std = model.std;
  project::Project plain = model.project;
  plain.augment = Json::array();
  data::rebuildPipeline(*pd, plain, registries.transforms);
  return pd;
}

/// Refuses an output that is one of the images or holds any of them (a folder of inputs).
void checkOutputApart(const std::string& out, const data::DatasetSource& images) {
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(out, ec);
  for (std::int64_t i = 0; i < images.size(); ++i) {
    const fs::path image = fs::weakly_canonical(images.describe(i), ec);
    const auto rel = image.lexically_relative(where);
    if (image == where || (!rel.empty() && *rel.begin() != ".."))
      throw Error("--out " + out + ": " +
                  (image == where ? "is an input image (" : "holds an input image (") +
                  images.describe(i) + "); write the predictions elsewhere");
  }
}

}  // namespace

PredictResult predictImages(const PredictOptions& options) {
  const auto& registries = needRegistries(options.registries, "PredictOptions");
  if (options.inputs.empty()) throw Error("predict: no image or folder to predict on");
  const auto model = checkpoint::loadModel(options.model, options.registries);
  const auto task = predictionTask(registries, model);
  const auto pd = evaluationProcessing(registries, model);
  const data::SampleProcessor& processor = *pd->processor;

  data::SampleSet set;
  set.name = "predict";
  set.source = data::openImageList(options.inputs, model.classes);
  set.indices.resize(std::size_t(set.source->size()));
  for (std::int64_t i = 0; i < set.source->size(); ++i)
    set.indices[std::size_t(i)] = i;
  PredictResult result;
  result.task = task->name();
  result.out =
      options.out.empty() ? registries.tasks.get(model.project.task).predictionsName : options.out;
  result.skipped = set.source->skippedAtScan();
  checkOutputApart(result.out, *set.source);
  auto writer = task->predictionWriter(result.out, set);
  if (!writer) throw Error("predict: the task " + task->name() + " writes no predictions");
  writer->setImageGeometry(
      [&processor, &set](std::int64_t k) { return processor.imageGeometry(set, k); });

  torch::NoGradGuard noGrad;
  model.net->eval();
  const std::int64_t total = set.size();
  const std::int64_t floats = processor.sampleFloats();
  const auto& f = processor.format();
  const std::int64_t batch = std::max<std::int64_t>(1, options.batchSize);
  for (std::int64_t start = 0; start < total; start += batch) {
    const std::int64_t n = std::min(batch, total - start);
    auto images = torch::empty({n, f.channels, f.height, f.width}, torch::kFloat);
    std::vector<std::string> errors(static_cast<std::size_t>(n));
    at::parallel_for(0, n, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t j = begin; j < end; ++j) {
        try {
          processor.process(set, start + j, false, 0, 0, images.data_ptr<float>() + j * floats);
        } catch (const data::SampleError& e) {
          errors[std::size_t(j)] = e.what();
        }
      }
    });
    std::vector<std::int64_t> good, samples;
    for (std::int64_t j = 0; j < n; ++j) {
      if (errors[std::size_t(j)].empty()) {
        good.push_back(j);
        samples.push_back(start + j);
      } else {
        result.skipped.push_back(data::skippedFor(set.describe(start + j), errors[std::size_t(j)]));
      }
    }
    if (!good.empty()) {
      const auto kept = images.index_select(0, torch::tensor(good, torch::kLong));
      const auto output = model.forward(kept).to(torch::kFloat);
      writer->add(output, torch::Tensor(), samples);
      result.predicted += std::int64_t(samples.size());
    }
    if (options.progress && !options.progress(start + n, total)) {
      result.cancelled = true;
      return result;
    }
  }
  if (result.predicted == 0)
    throw Error("predict: no image could be read (" + result.skipped.front().item + ": " +
                result.skipped.front().reason + ")");
  writer->finish();
  return result;
}

}  // namespace netsmith::eval
