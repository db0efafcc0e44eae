#include "train/evaluation.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <opencv2/imgproc.hpp>

#include "augment/transform.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_model.h"
#include "common/error.h"
#include "data/data_loader.h"
#include "data/named_paths.h"
#include "data/project_data.h"
#include "data/sample_processor.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "task/classification.h"
#include "task/task.h"
#include "task/task_registry.h"
#include "train/lr_schedule.h"
#include "train/metrics.h"
#include "train/run_setup.h"
#include "train/train_options.h"
#include "train/trainability.h"

namespace netsmith::train {

namespace {

/// One normalised C x H x W image back to 8 bits, scaled to at most `side` pixels.
cv::Mat picture(const torch::Tensor& image, const std::vector<double>& mean,
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

double ratio(double a, double b) {
  return b > 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

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
  Json j = evalMetricsToJson(metrics);
  j["checkpoint"] = checkpoint;
  j["split"] = split;
  j["task"] = task;
  if (!classView) {
    // The task's loss, samples and figures only: no class leftovers.
    for (const char* key : {"accuracy", "per_class_accuracy"})
      j.erase(key);
    // A task may count its own confusion (segmentation: pixels).
    if (metrics.confusion.empty()) j.erase("confusion");
    return j;
  }
  j["classes"] = classes;
  j["top_k"] = topK;
  j["top_k_accuracy"] = topKAccuracy;
  Json per = Json::array();
  auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(); };
  for (const auto& c : perClass)
    per.push_back(Json{{"precision", num(c.precision)},
                       {"recall", num(c.recall)},
                       {"f1", num(c.f1)},
                       {"average_precision", num(c.averagePrecision)},
                       {"support", c.support}});
  j["per_class"] = per;
  j["temperature"] = temperature;
  j["calibration"] = calibration.toJson();
  if (temperatureFitted) j["temperature_fit"] = temperatureFit.toJson();
  if (!tta.empty())
    j["tta"] = Json{{"views", tta},
                    {"count", ttaViews},
                    {"accuracy_without", accuracyWithoutTta},
                    {"gain", metrics.accuracy - accuracyWithoutTta}};
  return j;
}

namespace {

/// Precision, recall and F1 of every class from a confusion matrix.
std::vector<ClassScores> classScores(const EvalMetrics& metrics) {
  std::vector<ClassScores> out;
  const auto& cm = metrics.confusion;
  for (std::size_t c = 0; c < cm.size(); ++c) {
    double tp = double(cm[c][c]), predictedAs = 0, actual = 0;
    for (std::size_t k = 0; k < cm.size(); ++k) {
      predictedAs += double(cm[k][c]);
      actual += double(cm[c][k]);
    }
    ClassScores s;
    s.support = std::int64_t(actual);
    s.precision = ratio(tp, predictedAs);
    s.recall = ratio(tp, actual);
    if (!std::isfinite(s.precision) || !std::isfinite(s.recall))
      s.f1 = std::numeric_limits<double>::quiet_NaN();
    else
      s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0;
    out.push_back(s);
  }
  return out;
}

/// Each sample of `batch` with its prediction, loss, top-3 and picture.
void keepOutcomes(const data::Batch& batch, const torch::Tensor& logits,
                  const torch::Tensor& predicted, std::int64_t classes,
                  const data::Normalization& norm, int thumbnail,
                  std::vector<SampleOutcome>& samples) {
  const auto logp = torch::log_softmax(logits, 1);
  const auto losses = -logp.gather(1, batch.labels.unsqueeze(1)).squeeze(1);
  const auto [topP, topI] = logp.exp().topk(std::min<std::int64_t>(3, classes), 1);
  for (std::int64_t i = 0; i < batch.labels.size(0); ++i) {
    SampleOutcome s;
    s.position = batch.samples[std::size_t(i)];
    s.label = batch.labels[i].item<std::int64_t>();
    s.predicted = predicted[i].item<std::int64_t>();
    s.loss = losses[i].item<double>();
    for (std::int64_t k = 0; k < topP.size(1); ++k)
      s.top.emplace_back(topI[i][k].item<std::int64_t>(), topP[i][k].item<double>());
    s.picture = picture(batch.images[i], norm.mean, norm.std, thumbnail);
    samples.push_back(std::move(s));
  }
}

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

/// The loader of an evaluation: whole batches in split order, no augmentation.
data::LoaderOptions evaluationLoaderOptions(const data::ProjectData& pd,
                                            const EvaluationOptions& options) {
  data::LoaderOptions lo;
  lo.batchSize = std::max<std::int64_t>(1, options.batchSize);
  lo.training = false;
  lo.shuffle = false;
  lo.onError = pd.data.config.onError;
  return lo;
}

/// Tells options.progress that `done` of `total` samples are evaluated; false (the loader
/// stopped, `out` marked cancelled) when it asks to cancel.
bool keepEvaluating(const EvaluationOptions& options, std::int64_t done, std::int64_t total,
                    data::DataLoader& loader, Evaluation& out) {
  if (!options.progress || options.progress(done, total)) return true;
  loader.stop();
  out.cancelled = true;
  return false;
}

/// Runs `net` over `set`: the confusion counts, the summed loss, top-k hits and (when asked)
/// every sample's outcome, into `out`.
/// The task's predictions file when options.predictions asks for one (null otherwise).
std::unique_ptr<task::PredictionWriter> predictionsFor(const task::Task& task,
                                                       const data::SampleSet& set,
                                                       const EvaluationOptions& options) {
  if (options.predictions.empty()) return nullptr;
  auto writer = task.predictionWriter(options.predictions, set);
  if (!writer) throw Error("--predictions: the task " + task.name() + " writes no predictions");
  return writer;
}

/// The tapped features of a batch's samples into out.features at their positions.
void keepFeatures(const torch::Tensor& tapped, const std::vector<std::int64_t>& positions,
                  const data::SampleSet& set, Evaluation& out) {
  const std::int64_t total = set.size();
  const auto f = graph::featureRows(tapped);
  if (out.featureWidth == 0) {
    out.featureWidth = f.size(1);
    out.features.assign(std::size_t(total * out.featureWidth), NAN);
    out.featureSamples.assign(std::size_t(total), std::string());
  }
  if (f.size(1) != out.featureWidth) return;
  const float* data = f.data_ptr<float>();
  for (std::size_t r = 0; r < positions.size(); ++r) {
    std::copy(data + r * out.featureWidth, data + (r + 1) * out.featureWidth,
              out.features.begin() + positions[r] * out.featureWidth);
    out.featureSamples[std::size_t(positions[r])] = set.describe(positions[r]);
  }
}

/// The pictures test-time augmentation `tta` averages over, the batch itself first.
std::vector<torch::Tensor> ttaViews(const torch::Tensor& x, const std::string& tta) {
  std::vector<torch::Tensor> views;
  views.reserve(6);
  views.push_back(x);
  if (tta.empty()) return views;
  views.push_back(x.flip({3}));
  if (tta == "crops") {
    const std::int64_t h = x.size(2), w = x.size(3);
    const std::int64_t p = std::max<std::int64_t>(1, std::min(h, w) / 14);
    const auto padded = torch::constant_pad_nd(x, {p, p, p, p}, 0);
    for (const auto& [dy, dx] :
         {std::pair<std::int64_t, std::int64_t>{0, 0}, {0, 2 * p}, {2 * p, 0}, {2 * p, 2 * p}})
      views.push_back(padded.narrow(2, dy, h).narrow(3, dx, w));
  }
  return views;
}

void runEvaluation(graph::GraphModuleImpl& net, const data::SampleSet& set,
                   const data::ProjectData& pd, const task::Task& task,
                   const EvaluationOptions& options, Evaluation& out) {
  const auto predictions = predictionsFor(task, set, options);
  data::DataLoader loader(set, *pd.processor, evaluationLoaderOptions(pd, options));
  net.eval();
  const std::int64_t classes =
      std::max<std::int64_t>(pd.data.numClasses(), net.analysis().outputShape.at(0));
  out.topK = int(std::clamp<std::int64_t>(options.topK, 1, classes));

  torch::NoGradGuard noGrad;
  task::ConfusionCounter counter(classes);
  std::int64_t rightWithoutTta = 0;
  CalibrationCounter calibration;
  // Every probability, for the per-class precision-recall curves (bounded).
  const bool curves = set.size() * classes <= kPrCurveValues;
  std::vector<float> probabilities;
  std::vector<std::int64_t> curveLabels;
  double lossSum = 0;
  std::int64_t topKHits = 0, done = 0;
  const auto total = set.size();
  loader.startEpoch(0);
  while (auto batch = loader.next()) {
    torch::Tensor tapped;
    auto logits =
        (out.featureNode.empty() ? net.forward(batch->images)
                                 : net.forwardTapping(batch->images, out.featureNode, tapped))
            .to(torch::kFloat);
    if (tapped.defined()) keepFeatures(tapped, batch->samples, set, out);
    if (out.temperature != 1) logits = logits / out.temperature;
    const auto labels = batch->labels;
    if (!out.tta.empty()) {
      // The mean of the views' probabilities, as log-probabilities: every figure below (the
      // loss, the prediction, the confidence, the predictions file) is of the mean.
      rightWithoutTta += logits.argmax(1).eq(labels).sum().item<std::int64_t>();
      const auto views = ttaViews(batch->images, out.tta);
      auto probs = torch::softmax(logits, 1);
      for (std::size_t v = 1; v < views.size(); ++v) {
        auto z = net.forward(views[v]).to(torch::kFloat);
        if (out.temperature != 1) z = z / out.temperature;
        probs = probs + torch::softmax(z, 1);
      }
      out.ttaViews = int(views.size());
      logits = (probs / double(views.size())).clamp_min(1e-30).log();
    }
    // The same sum as evaluateClassifier, so both report the same loss.
    lossSum +=
        torch::nn::functional::cross_entropy(
            logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
            .item<double>();
    const auto predicted = logits.argmax(1);
    counter.add(predicted, labels);
    if (curves) {
      const auto p = torch::softmax(logits, 1).contiguous();
      probabilities.insert(probabilities.end(), p.data_ptr<float>(),
                           p.data_ptr<float>() + p.numel());
      const auto y = labels.contiguous();
      curveLabels.insert(curveLabels.end(), y.data_ptr<std::int64_t>(),
                         y.data_ptr<std::int64_t>() + y.numel());
    }
    {
      const auto confidence = std::get<0>(torch::softmax(logits, 1).max(1)).contiguous();
      const auto hit = predicted.eq(labels).contiguous();
      for (std::int64_t i = 0; i < confidence.size(0); ++i)
        calibration.add(confidence.data_ptr<float>()[i], hit.data_ptr<bool>()[i]);
    }
    const auto topk = std::get<1>(logits.topk(out.topK, 1));
    topKHits += topk.eq(labels.unsqueeze(1)).any(1).sum().item<std::int64_t>();
    if (options.keepSamples) {
      keepOutcomes(*batch, logits, predicted, classes, pd.normalization, options.thumbnail,
                   out.samples);
    }
    if (predictions) predictions->add(logits, labels, batch->samples);
    done += labels.size(0);
    if (!keepEvaluating(options, done, total, loader, out)) break;
  }
  out.metrics = counter.metrics(lossSum);
  out.calibration = calibration.finish();
  if (predictions && !out.cancelled) predictions->finish();
  out.topKAccuracy = out.metrics.samples ? double(topKHits) / double(out.metrics.samples) : 0;
  if (curves) {
    for (std::int64_t k = 0; k < classes; ++k) {
      std::vector<std::pair<float, bool>> scored(curveLabels.size());
      for (std::size_t i = 0; i < curveLabels.size(); ++i)
        scored[i] = {probabilities[i * std::size_t(classes) + std::size_t(k)], curveLabels[i] == k};
      out.prCurves.push_back(precisionRecall(std::move(scored)));
    }
  }
  if (!out.tta.empty())
    out.accuracyWithoutTta =
        out.metrics.samples ? double(rightWithoutTta) / double(out.metrics.samples) : 0;
}

/// The logits (row-major, `classes` a row) and labels of every sample of `set`.
void collectLogits(graph::GraphModuleImpl& net, const data::SampleSet& set,
                   const data::ProjectData& pd, const EvaluationOptions& options,
                   std::int64_t classes, std::vector<float>& logits,
                   std::vector<std::int64_t>& labels, Evaluation& out) {
  data::DataLoader loader(set, *pd.processor, evaluationLoaderOptions(pd, options));
  net.eval();
  torch::NoGradGuard noGrad;
  loader.startEpoch(0);
  std::int64_t done = 0;
  while (auto batch = loader.next()) {
    const auto z = net.forward(batch->images).to(torch::kFloat).contiguous();
    if (z.size(1) != classes) throw Error("the model's outputs are not one score per class");
    logits.insert(logits.end(), z.data_ptr<float>(), z.data_ptr<float>() + z.numel());
    const auto y = batch->labels.contiguous();
    labels.insert(labels.end(), y.data_ptr<std::int64_t>(), y.data_ptr<std::int64_t>() + y.numel());
    done += y.numel();
    if (!keepEvaluating(options, done, set.size(), loader, out)) return;
  }
}

/// A mask (`view`'s, row-major) at `size`, as the loader fits masks (data::fitMask: nearest
/// neighbour, classes stay classes).
std::vector<std::uint8_t> maskAtSize(std::vector<std::uint8_t> mask, int h, int w, cv::Size size) {
  if (mask.empty() || (size.height == h && size.width == w)) return mask;
  const cv::Mat in(h, w, CV_8UC1, mask.data());
  const cv::Mat out = data::fitMask(in, size.height, size.width, data::FitPolicy::Resize);
  return std::vector<std::uint8_t>(out.begin<std::uint8_t>(), out.end<std::uint8_t>());
}

/// Drops the pictures and masks of all but the kMaskSamplesKept lowest- and highest-scoring
/// samples that hold masks (no IoU: dropped first), once they are many: memory stays bounded
/// whatever the split's size.
void pruneMaskSamples(std::vector<SampleOutcome>& samples) {
  std::vector<std::size_t> holding;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (!samples[i].view.trueMask.empty() ||
        (samples[i].view.height > 0 && !samples[i].picture.empty()))
      holding.push_back(i);
  if (holding.size() <= 4 * kMaskSamplesKept) return;
  std::vector<std::size_t> scored;
  for (auto i : holding)
    if (std::isfinite(samples[i].loss)) scored.push_back(i);
  std::stable_sort(scored.begin(), scored.end(), [&samples](std::size_t a, std::size_t b) {
    return samples[a].loss < samples[b].loss;
  });
  std::vector<bool> keep(samples.size(), false);
  for (std::size_t j = 0; j < scored.size(); ++j)
    if (j < kMaskSamplesKept || j + kMaskSamplesKept >= scored.size()) keep[scored[j]] = true;
  for (auto i : holding) {
    if (keep[i]) continue;
    auto& s = samples[i];
    // (A detection sample keeps its boxes, a few hundred bytes: the view's precision-recall
    // curve and counts need every sample's.)
    s.picture.release();
    s.view.trueMask = {};
    s.view.predictedMask = {};
  }
}

/// Each sample of `batch` as its task describes it, with its picture.
void keepTaskOutcomes(const data::Batch& batch, const torch::Tensor& output, const task::Task& task,
                      const data::Normalization& norm, int thumbnail,
                      std::vector<SampleOutcome>& samples) {
  auto views = task.describeSamples(output.to(torch::kCPU), batch.target.to(torch::kCPU));
  for (std::size_t i = 0; i < views.size() && i < batch.samples.size(); ++i) {
    SampleOutcome s;
    s.position = batch.samples[i];
    s.loss = views[i].score;
    auto& v = views[i];
    const bool masks = !v.trueMask.empty() || !v.predictedMask.empty();
    const bool boxes = !masks && v.height > 0;  // detection: boxes in the model input's pixels
    s.picture = picture(batch.images[std::int64_t(i)], norm.mean, norm.std,
                        masks || boxes ? std::max(thumbnail, kMaskThumbnail) : thumbnail);
    if (boxes) {
      // The boxes at the picture's size, as masks are.
      const float sx = float(s.picture.cols) / float(v.width);
      const float sy = float(s.picture.rows) / float(v.height);
      for (auto* list : {&v.trueBoxes, &v.predictedBoxes})
        for (auto& b : *list)
          b.x0 *= sx, b.x1 *= sx, b.y0 *= sy, b.y1 *= sy;
      v.height = s.picture.rows;
      v.width = s.picture.cols;
    }
    if (masks) {
      const cv::Size size(s.picture.cols, s.picture.rows);
      v.trueMask = maskAtSize(std::move(v.trueMask), v.height, v.width, size);
      v.predictedMask = maskAtSize(std::move(v.predictedMask), v.height, v.width, size);
      v.height = size.height;
      v.width = size.width;
    }
    s.view = std::move(v);
    samples.push_back(std::move(s));
  }
  pruneMaskSamples(samples);
}

/// Runs `net` over `set` for a task without the class view: its figures only.
void runFigureEvaluation(graph::GraphModuleImpl& net, const data::SampleSet& set,
                         const data::ProjectData& pd, const std::shared_ptr<task::Task>& task,
                         const EvaluationOptions& options, Evaluation& out) {
  auto lo = evaluationLoaderOptions(pd, options);
  lo.collator = task;
  data::DataLoader loader(set, *pd.processor, lo);
  net.eval();
  torch::NoGradGuard noGrad;
  const auto sums = task->evalSums();
  const auto predictions = predictionsFor(*task, set, options);
  if (predictions) {
    // Results in each image's own pixels (detection's): the evaluation's geometry undone.
    const data::SampleProcessor& processor = *pd.processor;
    predictions->setImageGeometry(
        [&processor, &set](std::int64_t k) { return processor.imageGeometry(set, k); });
  }
  std::int64_t done = 0;
  const auto total = set.size();
  loader.startEpoch(0);
  while (auto batch = loader.next()) {
    const auto output = net.forward(batch->images).to(torch::kFloat);
    sums->add(output, batch->target);
    if (options.keepSamples)
      keepTaskOutcomes(*batch, output, *task, pd.normalization, options.thumbnail, out.samples);
    if (predictions) predictions->add(output, batch->target, batch->samples);
    done += batch->images.size(0);
    if (!keepEvaluating(options, done, total, loader, out)) break;
  }
  out.metrics = sums->finish();
  if (predictions && !out.cancelled) predictions->finish();
}

}  // namespace

Evaluation evaluateCheckpoint(const EvaluationOptions& options) {
  const std::string& ckptPath = options.checkpoint;
  const auto& registries = needRegistries(options.registries, "EvaluationOptions");
  const auto& registry = registries.ops;
  checkpoint::CheckpointData ckpt;
  project::LoadedProject loaded;
  std::string baseDir;
  graph::GraphModule net{nullptr};
  const bool fromProject = checkpoint::isProjectFile(ckptPath);
  if (fromProject) {
    // A project whose weights come from its init_from (an imported model, before training):
    // the user named the project, so its data is named too.
    auto pw = checkpoint::modelFromProjectWeights(ckptPath, registry);
    loaded = std::move(pw.loaded);
    baseDir = loaded.baseDir();
    net = std::move(pw.net);
  } else {
    ckpt = checkpoint::readCheckpoint(ckptPath);
    loaded = checkpoint::checkpointProject(ckpt, ckptPath);
    baseDir = data::checkpointBaseDir(ckpt.meta, ckptPath);
  }
  // The checkpoint's own data is read only from paths the user named (see data/named_paths.h).
  if (!fromProject && options.data.empty() && !options.dataFromCheckpoint) {
    const std::string home = data::checkpointHome(ckptPath);
    const auto unnamed = data::unnamedDataPaths(loaded.project.data, baseDir, home);
    if (!unnamed.empty())
      throw data::UnnamedDataError(data::unnamedDataMessage(ckptPath, home, unnamed), unnamed);
  }
  // Temperature scaling is fitted on the validation split as training made it.
  project::Project fitProject = loaded.project;
  std::string fitBaseDir = baseDir;
  if (options.fitTemperature)
    resolveEvaluationData(ckpt.meta, options.data, fitProject, fitBaseDir, true);
  // The validation split as training made it (the run's fraction and seed), when asked for.
  resolveEvaluationData(ckpt.meta, options.data, loaded.project, baseDir,
                        options.split == "validation");

  torch::manual_seed(0);
  if (!fromProject) net = checkpoint::modelFromCheckpoint(loaded.project, ckpt, ckptPath, registry);
  auto pd = data::openProjectData(loaded.project, baseDir, registries.transforms, "");
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
  // The run's own loss, label smoothing and class weights: eval's loss is the loss the run
  // reported (a Huber regression's is Huber, not MSE).
  Problems trainProblems;
  const TrainOptions trainOptions =
      parseTrainOptions(loaded.project.train, registries.schedules, trainProblems);
  task::TaskSetup setup = taskSetupFor(trainOptions, pd->data, net->analysis());
  setup.train = &pd->data.train;
  setup.state = ckpt.meta.value("task_state", Json());
  std::shared_ptr<task::Task> task;
  try {
    const auto& def = registries.tasks.get(loaded.project.task);
    if (const auto p = task::dataTargetProblem(def, pd->data.config)) throw Error(*p);
    task = def.make(setup);
  } catch (const Error& e) {
    throw Error(ckptPath + ": " + e.what());
  }
  out.task = task->name();
  out.classView = data::targetTraits(task->target().kind).oneClassPerSample;
  if (const auto p = task->headProblem(net->analysis())) {
    throw Error(ckptPath + ": the checkpoint's model does not fit this data: " + p->message +
                (options.data.empty() ? "" : " (from " + options.data + ")"));
  }
  data::SampleSet set = out.split == "train"        ? pd->data.train
                        : out.split == "validation" ? pd->data.validation
                                                    : pd->data.test;
  if (set.empty()) throw Error("the " + out.split + " split is empty");
  if (options.limit > 0 && set.size() > options.limit) {
    const auto& source = *set.source;
    set.indices = data::stratifiedSubset(
        set.indices, [&](std::int64_t i) { return source.stratum(i); }, source.numStrata(),
        options.limit, 0);
  }
  if (!out.classView) {
    if (!options.tta.empty())
      throw Error("--tta: test-time augmentation averages class probabilities; the task \"" +
                  out.task + "\" has none");
    if (options.fitTemperature || options.temperature != 1)
      throw Error("--temperature: temperature scaling divides class scores; the task \"" +
                  out.task + "\" has none");
    out.topK = 0;
    runFigureEvaluation(*net, set, *pd, task, options, out);
    return out;
  }
  out.temperature = options.temperature;
  out.tta = options.tta;
  if (options.fitTemperature) {
    auto fitData = data::openProjectData(fitProject, fitBaseDir, registries.transforms, "");
    if (!fitData) throw Error("cancelled");
    data::SampleSet validation = fitData->data.validation;
    if (validation.empty())
      throw Error(ckptPath +
                  ": --fit-temperature needs a validation split (data.validation) "
                  "to fit on, and this data has none");
    const auto& source = *validation.source;
    if (options.fitLimit > 0 && validation.size() > options.fitLimit)
      validation.indices = data::stratifiedSubset(
          validation.indices, [&](std::int64_t i) { return source.stratum(i); }, source.numStrata(),
          options.fitLimit, 0);
    const auto classes =
        std::max<std::int64_t>(pd->data.numClasses(), net->analysis().outputShape.at(0));
    std::vector<float> logits;
    std::vector<std::int64_t> labels;
    collectLogits(*net, validation, *fitData, options, classes, logits, labels, out);
    if (out.cancelled) return out;
    out.temperatureFit = fitTemperature(logits, classes, labels);
    out.temperatureFitted = true;
    out.temperature = out.temperatureFit.temperature;
  }
  if (options.features)
    out.featureNode = loaded.project.model.penultimate(net->analysis().outputId);
  runEvaluation(*net, set, *pd, *task, options, out);
  out.perClass = classScores(out.metrics);
  for (std::size_t k = 0; k < out.perClass.size(); ++k)
    out.perClass[k].averagePrecision = k < out.prCurves.size()
                                           ? out.prCurves[k].averagePrecision
                                           : std::numeric_limits<double>::quiet_NaN();
  return out;
}

}  // namespace netsmith::train
