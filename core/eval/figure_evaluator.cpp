// The figures' evaluator (eval/evaluator.h): for a task without the class view, its loss and
// figures (Task::evalSums), its per-class or per-target figures, its samples as it describes
// them (Task::describeSamples: masks and boxes at their picture's size, bounded in number) and
// its predictions file.
#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "data/sample_processor.h"
#include "eval/evaluation_input.h"
#include "eval/evaluator.h"

namespace netsmith::eval {

namespace {

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
    s.picture = evaluationPicture(batch.images[std::int64_t(i)], norm.mean, norm.std,
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

/// Runs the model over `set` for a task without the class view: its figures only.
void runFigureEvaluation(const ModelRun& run, const data::SampleSet& set,
                         const data::ProjectData& pd, const std::shared_ptr<task::Task>& task,
                         const EvaluationOptions& options, Evaluation& out) {
  auto lo = evaluationLoaderOptions(pd, options);
  lo.collator = task;
  data::DataLoader loader(set, *pd.processor, lo);
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
    const auto output = run(batch->images).to(torch::kFloat);
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

/// A task's per-class (or per-target) figures as a table: one row per class, one column per
/// figure.
std::string perClassTable(const task::EvalMetrics& m, const std::vector<std::string>& names) {
  if (m.perClass.empty()) return {};
  std::size_t rows = 0;
  std::string out = formatted("\n  %-16s", "");
  for (const auto& [figure, values] : m.perClass) {
    out += formatted(" %10s", figure.c_str());
    rows = std::max(rows, values.size());
  }
  out += "\n";
  for (std::size_t r = 0; r < rows; ++r) {
    out +=
        formatted("  %-16s", (r < names.size() ? printable(names[r]) : std::to_string(r)).c_str());
    for (const auto& [figure, values] : m.perClass) {
      if (r < values.size() && std::isfinite(values[r]))
        out += formatted(" %10.4g", values[r]);
      else
        out += formatted(" %10s", "-");
    }
    out += "\n";
  }
  return out;
}

class FigureEvaluator final : public Evaluator {
 public:
  void check(const EvaluationOptions& options, const std::string& task) const override {
    if (!options.tta.empty())
      throw Error("--tta: test-time augmentation averages class probabilities; the task \"" + task +
                  "\" has none");
    if (options.fitTemperature || options.temperature != 1)
      throw Error("--temperature: temperature scaling divides class scores; the task \"" + task +
                  "\" has none");
  }

  void evaluate(const EvaluationInput& in, Evaluation& out) const override {
    out.topK = 0;
    runFigureEvaluation(in.run, *in.set, *in.data, in.task, *in.options, out);
  }

  void addJson(const Evaluation& e, Json& json) const override {
    // The task's loss, samples and figures only: no class leftovers.
    for (const char* key : {"accuracy", "per_class_accuracy"})
      json.erase(key);
    // A task may count its own confusion (segmentation: pixels).
    if (e.metrics.confusion.empty()) json.erase("confusion");
  }

  std::string report(const Evaluation& e, const EvaluationFiles& files) const override {
    // Its loss and figures, as its run reported them.
    std::string out = formatted("task %s: loss %.4f on %lld samples\n", e.task.c_str(),
                                e.metrics.loss, (long long)e.metrics.samples);
    for (const auto& [name, value] : e.metrics.figures)
      if (std::isfinite(value))
        out += formatted("  %-16s %.6g\n", name.c_str(), value);
      else
        out += formatted("  %-16s -\n", name.c_str());  // the data cannot give it (no large boxes)
    out += perClassTable(e.metrics, e.classes.empty() ? e.targets : e.classes);
    if (!files.predictions.empty()) out += "predictions: " + printable(files.predictions) + "\n";
    return out;
  }
};

}  // namespace

std::shared_ptr<const Evaluator> figureEvaluator() {
  return std::make_shared<FigureEvaluator>();
}

}  // namespace netsmith::eval
