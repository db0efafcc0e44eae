#include "eval/predict.h"

#include <torch/torch.h>

#include <filesystem>
#include <mutex>

#include "checkpoint/loaded_model.h"
#include "common/error.h"
#include "data/data_module.h"
#include "data/project_data.h"
#include "eval/evaluator.h"
#include "export/onnx_model.h"
#include "graph/graph_analysis.h"
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
                                           const checkpoint::LoadedModel& model,
                                           const graph::GraphAnalysis& analysis,
                                           std::vector<std::string>& targets,
                                           std::vector<std::string>& colors) {
  resolve::ResolveOptions how;
  how.analysis = &analysis;
  how.baseDir = model.baseDir;
  const auto resolved =
      resolve::resolveProject(project::LoadedProject{model.project, {}, ""}, registries, how);
  train::TaskFacts facts{std::int64_t(model.classes.size()), model.classes, {}};
  const Json recorded =
      model.taskState.is_object() ? model.taskState.value("targets", Json()) : Json();
  if (recorded.is_array())
    for (const auto& t : recorded)
      if (t.is_string()) facts.targets.push_back(t.get<std::string>());
  targets = facts.targets;
  if (resolved.data) colors = resolved.data->colors;
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

data::SampleSet wholeSet(std::shared_ptr<const data::DatasetSource> source) {
  data::SampleSet set;
  set.name = "predict";
  set.indices.resize(std::size_t(source->size()));
  for (std::int64_t i = 0; i < source->size(); ++i)
    set.indices[std::size_t(i)] = i;
  set.source = std::move(source);
  return set;
}

}  // namespace

struct Predictor::Loaded {
  RegistriesPtr registries;
  checkpoint::LoadedModel model;
  graph::GraphAnalysis analysis;
  std::shared_ptr<task::Task> task;
  std::string taskName;
  std::vector<std::string> names;
  std::vector<std::string> colors;
  std::unique_ptr<data::ProjectData> pd;
  bool explains = false;
  /// One run of the network at a time: a superseded background prediction may still be
  /// finishing its batch when the next one starts.
  mutable std::mutex running;

  /// Runs the model over `set` in batches of `batch`: `each(output, samples)` for the samples
  /// read, `failed(sample, error)` for the others; `progress` after each batch (false: stop).
  /// Returns false when stopped.
  bool run(const data::SampleSet& set, std::int64_t batch,
           const std::function<void(const torch::Tensor&, const std::vector<std::int64_t>&)>& each,
           const std::function<void(std::int64_t, const std::string&)>& failed,
           const std::function<bool(std::int64_t, std::int64_t)>& progress) const {
    const std::lock_guard<std::mutex> lock(running);
    torch::NoGradGuard noGrad;
    const data::SampleProcessor& processor = *pd->processor;
    const std::int64_t total = set.size();
    const std::int64_t floats = processor.sampleFloats();
    const auto& f = processor.format();
    batch = std::max<std::int64_t>(1, batch);
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
          failed(start + j, errors[std::size_t(j)]);
        }
      }
      if (!good.empty())
        each(model.forward(images.index_select(0, torch::tensor(good, torch::kLong)))
                 .to(torch::kFloat),
             samples);
      if (progress && !progress(start + n, total)) return false;
    }
    return true;
  }
};

Predictor::Predictor(RegistriesPtr registries, const std::string& path)
    : m(std::make_unique<Loaded>()) {
  const auto& r = needRegistries(registries, "Predictor");
  m->registries = std::move(registries);
  m->model = exporting::loadAnyModel(path, m->registries);
  // An exported file runs without its net: the analysis comes from its snapshot's graph.
  m->analysis =
      m->model.net ? m->model.net->analysis() : graph::analyseGraph(m->model.project.model, r.ops);
  std::vector<std::string> targets;
  m->task = predictionTask(r, m->model, m->analysis, targets, m->colors);
  m->taskName = m->task->name();
  m->names = m->model.classes.empty() ? targets : m->model.classes;
  m->pd = evaluationProcessing(r, m->model);
  // Grad-CAM needs the net's gradients: an exported file gives none.
  m->explains = m->model.net && r.evaluators.forTask(m->taskName)->scalesClassScores();
}

Predictor::~Predictor() = default;

const std::string& Predictor::model() const {
  return m->model.source;
}

const std::string& Predictor::runtime() const {
  return m->model.runtime;
}

const std::string& Predictor::task() const {
  return m->taskName;
}

const std::vector<std::string>& Predictor::names() const {
  return m->names;
}

bool Predictor::explainsClasses() const {
  return m->explains;
}

const std::vector<std::string>& Predictor::colors() const {
  return m->colors;
}

bool Predictor::outputsProbabilities() const {
  return !m->model.classes.empty();
}

std::vector<PredictedImage> Predictor::predict(const std::vector<std::string>& paths,
                                               std::int64_t batchSize) const {
  std::vector<PredictedImage> out(paths.size());
  if (paths.empty()) return out;
  for (std::size_t i = 0; i < paths.size(); ++i)
    out[i].path = paths[i];
  const auto set = wholeSet(data::openImageList(paths, m->model.classes));
  if (set.size() != std::int64_t(paths.size()))  // a path named twice: each on its own
    throw Error("predict: the same image twice in one call");
  const data::SampleProcessor& processor = *m->pd->processor;
  m->run(
      set, batchSize,
      [&](const torch::Tensor& output, const std::vector<std::int64_t>& samples) {
        auto views = m->task->describeSamples(output, torch::Tensor());
        for (std::size_t i = 0; i < samples.size() && i < views.size(); ++i) {
          auto& p = out[std::size_t(samples[i])];
          p.image = set.source->load(samples[i]);
          p.view = std::move(views[i]);
          // Masks and boxes from the model input's pixels to the image's.
          const data::ImageGeometry g = processor.imageGeometry(set, samples[i]);
          auto& v = p.view;
          if (!v.predictedMask.empty()) {
            const cv::Mat mask(v.height, v.width, CV_8UC1, v.predictedMask.data());
            const cv::Mat back = data::maskInImage(mask, g);
            v.predictedMask.assign(back.begin<std::uint8_t>(), back.end<std::uint8_t>());
          }
          for (auto& b : v.predictedBoxes)
            b = data::boxInImage(b, g);
          if (v.height > 0) v.height = p.image.rows, v.width = p.image.cols;
        }
      },
      [&](std::int64_t sample, const std::string& error) {
        out[std::size_t(sample)].error = data::skippedFor(paths[std::size_t(sample)], error).reason;
      },
      {});
  return out;
}

PredictResult predictImages(const PredictOptions& options) {
  if (options.inputs.empty()) throw Error("predict: no image or folder to predict on");
  const Predictor predictor(options.registries, options.model);
  const auto& l = *predictor.m;
  const auto set = wholeSet(data::openImageList(options.inputs, l.model.classes));
  PredictResult result;
  result.task = l.taskName;
  result.runtime = l.model.runtime;
  result.out = options.out.empty() ? l.registries->tasks.get(l.model.project.task).predictionsName
                                   : options.out;
  result.skipped = set.source->skippedAtScan();
  checkOutputApart(result.out, *set.source);
  auto writer = l.task->predictionWriter(result.out, set);
  if (!writer) throw Error("predict: the task " + l.taskName + " writes no predictions");
  const data::SampleProcessor& processor = *l.pd->processor;
  writer->setImageGeometry(
      [&processor, &set](std::int64_t k) { return processor.imageGeometry(set, k); });
  const bool done = l.run(
      set, options.batchSize,
      [&](const torch::Tensor& output, const std::vector<std::int64_t>& samples) {
        writer->add(output, torch::Tensor(), samples);
        result.predicted += std::int64_t(samples.size());
      },
      [&](std::int64_t sample, const std::string& error) {
        result.skipped.push_back(data::skippedFor(set.describe(sample), error));
      },
      options.progress);
  if (!done) {
    result.cancelled = true;
    return result;
  }
  if (result.predicted == 0)
    throw Error("predict: no image could be read (" + result.skipped.front().item + ": " +
                result.skipped.front().reason + ")");
  writer->finish();
  return result;
}

}  // namespace netsmith::eval
