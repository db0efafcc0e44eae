// The class view's evaluator (eval/evaluator.h): for tasks of one class per sample, every
// sample's prediction, loss and top-3 (and a small picture), top-k accuracy, per-class
// precision / recall / F1 and average precision from the precision-recall curves, calibration
// under a given or fitted temperature, test-time augmentation and the penultimate features
// the embedding explorer lays out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"
#include "eval/calibration.h"
#include "eval/evaluation_input.h"
#include "eval/evaluator.h"
#include "eval/precision_recall.h"
#include "task/classification.h"

namespace netsmith::eval {

namespace {

double ratio(double a, double b) {
  return b > 0 ? a / b : std::numeric_limits<double>::quiet_NaN();
}

/// Precision, recall and F1 of every class from a confusion matrix.
std::vector<ClassScores> classScores(const task::EvalMetrics& metrics) {
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
    s.picture = evaluationPicture(batch.images[i], norm.mean, norm.std, thumbnail);
    samples.push_back(std::move(s));
  }
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

/// What runEvaluation sums over the batches.
struct ClassViewTally {
  ClassViewTally(std::int64_t classes, bool keepCurves) : counter(classes), curves(keepCurves) {}
  task::ConfusionCounter counter;
  std::int64_t rightWithoutTta = 0;
  CalibrationCounter calibration;
  // Every probability, for the per-class precision-recall curves (bounded).
  bool curves;
  std::vector<float> probabilities;
  std::vector<std::int64_t> curveLabels;
  double lossSum = 0;
  std::int64_t topKHits = 0;
};

/// The mean of the probabilities of the batch's test-time augmentation views (`logits` are the
/// batch's own), as log-probabilities.
torch::Tensor ttaMeanLogits(const ModelRun& run, const torch::Tensor& images,
                            const torch::Tensor& logits, Evaluation& out) {
  const auto views = ttaViews(images, out.tta);
  auto probs = torch::softmax(logits, 1);
  for (std::size_t v = 1; v < views.size(); ++v) {
    auto z = run(views[v]).to(torch::kFloat);
    if (out.temperature != 1) z = z / out.temperature;
    probs = probs + torch::softmax(z, 1);
  }
  out.ttaViews = int(views.size());
  return (probs / double(views.size())).clamp_min(1e-30).log();
}

/// Adds a batch's loss, confusion counts, probabilities, calibration and top-k hits to
/// `tally`; returns the batch's predictions.
torch::Tensor tallyClassViewBatch(ClassViewTally& tally, const torch::Tensor& logits,
                                  const torch::Tensor& labels, int topK) {
  // The same sum as evaluateClassifier, so both report the same loss.
  tally.lossSum +=
      torch::nn::functional::cross_entropy(
          logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
          .item<double>();
  auto predicted = logits.argmax(1);
  tally.counter.add(predicted, labels);
  if (tally.curves) {
    const auto p = torch::softmax(logits, 1).contiguous();
    tally.probabilities.insert(tally.probabilities.end(), p.data_ptr<float>(),
                               p.data_ptr<float>() + p.numel());
    const auto y = labels.contiguous();
    tally.curveLabels.insert(tally.curveLabels.end(), y.data_ptr<std::int64_t>(),
                             y.data_ptr<std::int64_t>() + y.numel());
  }
  {
    const auto confidence = std::get<0>(torch::softmax(logits, 1).max(1)).contiguous();
    const auto hit = predicted.eq(labels).contiguous();
    for (std::int64_t i = 0; i < confidence.size(0); ++i)
      tally.calibration.add(confidence.data_ptr<float>()[i], hit.data_ptr<bool>()[i]);
  }
  const auto topk = std::get<1>(logits.topk(topK, 1));
  tally.topKHits += topk.eq(labels.unsqueeze(1)).any(1).sum().item<std::int64_t>();
  return predicted;
}

/// Each class's precision-recall curve from the tallied probabilities, into out.prCurves.
void appendPrCurves(const ClassViewTally& tally, std::int64_t classes, Evaluation& out) {
  for (std::int64_t k = 0; k < classes; ++k) {
    std::vector<std::pair<float, bool>> scored(tally.curveLabels.size());
    for (std::size_t i = 0; i < tally.curveLabels.size(); ++i)
      scored[i] = {tally.probabilities[i * std::size_t(classes) + std::size_t(k)],
                   tally.curveLabels[i] == k};
    out.prCurves.push_back(precisionRecall(std::move(scored)));
  }
}

void runEvaluation(graph::GraphModuleImpl& net, const ModelRun& run, const data::SampleSet& set,
                   const data::ProjectData& pd, const task::Task& task,
                   const EvaluationOptions& options, Evaluation& out) {
  const auto predictions = predictionsFor(task, set, options);
  data::DataLoader loader(set, *pd.processor, evaluationLoaderOptions(pd, options));
  net.eval();
  const std::int64_t classes =
      std::max<std::int64_t>(pd.data.numClasses(), net.analysis().outputShape.at(0));
  out.topK = int(std::clamp<std::int64_t>(options.topK, 1, classes));

  torch::NoGradGuard noGrad;
  ClassViewTally tally(classes, set.size() * classes <= kPrCurveValues);
  std::int64_t done = 0;
  const auto total = set.size();
  loader.startEpoch(0);
  while (auto batch = loader.next()) {
    torch::Tensor tapped;
    auto logits =
        (out.featureNode.empty() ? run(batch->images)
                                 : net.forwardTapping(batch->images, out.featureNode, tapped))
            .to(torch::kFloat);
    if (tapped.defined()) keepFeatures(tapped, batch->samples, set, out);
    if (out.temperature != 1) logits = logits / out.temperature;
    const auto labels = batch->labels;
    if (!out.tta.empty()) {
      // The mean of the views' probabilities, as log-probabilities: every figure below (the
      // loss, the prediction, the confidence, the predictions file) is of the mean.
      tally.rightWithoutTta += logits.argmax(1).eq(labels).sum().item<std::int64_t>();
      logits = ttaMeanLogits(run, batch->images, logits, out);
    }
    const auto predicted = tallyClassViewBatch(tally, logits, labels, out.topK);
    if (options.keepSamples) {
      keepOutcomes(*batch, logits, predicted, classes, pd.normalization, options.thumbnail,
                   out.samples);
    }
    if (predictions) predictions->add(logits, labels, batch->samples);
    done += labels.size(0);
    if (!keepEvaluating(options, done, total, loader, out)) break;
  }
  out.metrics = tally.counter.metrics(tally.lossSum);
  out.calibration = tally.calibration.finish();
  if (predictions && !out.cancelled) predictions->finish();
  out.topKAccuracy = out.metrics.samples ? double(tally.topKHits) / double(out.metrics.samples) : 0;
  if (tally.curves) appendPrCurves(tally, classes, out);
  if (!out.tta.empty())
    out.accuracyWithoutTta =
        out.metrics.samples ? double(tally.rightWithoutTta) / double(out.metrics.samples) : 0;
}

/// The logits (row-major, `classes` a row) and labels of every sample of `set`.
void collectLogits(const ModelRun& run, const data::SampleSet& set, const data::ProjectData& pd,
                   const EvaluationOptions& options, std::int64_t classes,
                   std::vector<float>& logits, std::vector<std::int64_t>& labels, Evaluation& out) {
  data::DataLoader loader(set, *pd.processor, evaluationLoaderOptions(pd, options));
  torch::NoGradGuard noGrad;
  loader.startEpoch(0);
  std::int64_t done = 0;
  while (auto batch = loader.next()) {
    const auto z = run(batch->images).to(torch::kFloat).contiguous();
    if (z.size(1) != classes) throw Error("the model's outputs are not one score per class");
    logits.insert(logits.end(), z.data_ptr<float>(), z.data_ptr<float>() + z.numel());
    const auto y = batch->labels.contiguous();
    labels.insert(labels.end(), y.data_ptr<std::int64_t>(), y.data_ptr<std::int64_t>() + y.numel());
    done += y.numel();
    if (!keepEvaluating(options, done, set.size(), loader, out)) return;
  }
}

class ClassViewEvaluator final : public Evaluator {
 public:
  void check(const EvaluationOptions&, const std::string&) const override {}
  bool scalesClassScores() const override { return true; }

  void evaluate(const EvaluationInput& in, Evaluation& out) const override {
    auto& net = *in.net;
    const auto& pd = *in.data;
    const auto& options = *in.options;
    out.temperature = options.temperature;
    out.tta = options.tta;
    if (options.fitTemperature) {
      auto fitData = in.openFitData();
      if (!fitData) throw Error("cancelled");
      data::SampleSet validation = fitData->data.validation;
      if (validation.empty())
        throw Error(in.checkpoint +
                    ": --fit-temperature needs a validation split (data.validation) "
                    "to fit on, and this data has none");
      const auto& source = *validation.source;
      if (options.fitLimit > 0 && validation.size() > options.fitLimit)
        validation.indices = data::stratifiedSubset(
            validation.indices, [&](std::int64_t i) { return source.stratum(i); },
            source.numStrata(), options.fitLimit, 0);
      const auto classes =
          std::max<std::int64_t>(pd.data.numClasses(), net.analysis().outputShape.at(0));
      std::vector<float> logits;
      std::vector<std::int64_t> labels;
      collectLogits(in.run, validation, *fitData, options, classes, logits, labels, out);
      if (out.cancelled) return;
      out.temperatureFit = fitTemperature(logits, classes, labels);
      out.temperatureFitted = true;
      out.temperature = out.temperatureFit.temperature;
    }
    if (options.features) out.featureNode = in.project->model.penultimate(net.analysis().outputId);
    runEvaluation(net, in.run, *in.set, pd, *in.task, options, out);
    out.perClass = classScores(out.metrics);
    for (std::size_t k = 0; k < out.perClass.size(); ++k)
      out.perClass[k].averagePrecision = k < out.prCurves.size()
                                             ? out.prCurves[k].averagePrecision
                                             : std::numeric_limits<double>::quiet_NaN();
  }

  void addJson(const Evaluation& e, Json& json) const override {
    json["classes"] = e.classes;
    json["top_k"] = e.topK;
    json["top_k_accuracy"] = e.topKAccuracy;
    Json per = Json::array();
    auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(); };
    for (const auto& c : e.perClass)
      per.push_back(Json{{"precision", num(c.precision)},
                         {"recall", num(c.recall)},
                         {"f1", num(c.f1)},
                         {"average_precision", num(c.averagePrecision)},
                         {"support", c.support}});
    json["per_class"] = per;
    json["temperature"] = e.temperature;
    json["calibration"] = e.calibration.toJson();
    if (e.temperatureFitted) json["temperature_fit"] = e.temperatureFit.toJson();
    if (!e.tta.empty())
      json["tta"] = Json{{"views", e.tta},
                         {"count", e.ttaViews},
                         {"accuracy_without", e.accuracyWithoutTta},
                         {"gain", e.metrics.accuracy - e.accuracyWithoutTta}};
  }

  std::string report(const Evaluation& e, const EvaluationFiles& files) const override {
    const auto& m = e.metrics;
    std::string out = formatted("accuracy %s on %lld images, loss %.4f\n\nper class:\n",
                                percentText(m.accuracy).c_str(), (long long)m.samples, m.loss);
    for (std::size_t c = 0; c < m.perClassAccuracy.size(); ++c) {
      const std::string name = c < e.classes.size() ? printable(e.classes[c]) : std::to_string(c);
      std::int64_t n = 0;
      for (auto v : m.confusion[c])
        n += v;
      out += formatted("  %2zu %-16s %8s  (%lld images)\n", c, name.c_str(),
                       percentText(m.perClassAccuracy[c]).c_str(), (long long)n);
    }
    out += "\nconfusion matrix (rows: true class, columns: predicted):\n";
    for (const auto& row : m.confusion) {
      out += " ";
      for (auto v : row)
        out += formatted(" %6lld", (long long)v);
      out += "\n";
    }
    if (!files.predictions.empty()) out += "predictions: " + printable(files.predictions) + "\n";
    out += formatted("\ntop-%d accuracy %s\n", e.topK, percentText(e.topKAccuracy).c_str());
    if (!e.tta.empty())
      out += formatted(
          "test-time augmentation (%s, %d views): accuracy %s without, %s with: %+.2f points\n",
          e.tta.c_str(), e.ttaViews, percentText(e.accuracyWithoutTta).c_str(),
          percentText(m.accuracy).c_str(), 100.0 * (m.accuracy - e.accuracyWithoutTta));
    out += formatted("calibration: ECE %.4f, MCE %.4f (%d bins), NLL %.4f at temperature %.4g\n",
                     e.calibration.ece, e.calibration.mce, kCalibrationBins, m.loss, e.temperature);
    if (e.temperatureFitted) {
      const auto& f = e.temperatureFit;
      out += formatted(
          "temperature %.4f fitted on %lld validation samples: NLL %.4f -> %.4f, "
          "ECE %.4f -> %.4f; recorded in %s\n",
          f.temperature, (long long)f.samples, f.nllBefore, f.nllAfter, f.eceBefore, f.eceAfter,
          files.calibration.c_str());
    }
    out += "\nper class: precision recall f1 AP (average precision)\n";
    for (std::size_t c = 0; c < e.perClass.size(); ++c) {
      const auto& s = e.perClass[c];
      out += formatted("  %2zu %-16s %8s %8s %8s %8s\n", c,
                       c < e.classes.size() ? printable(e.classes[c]).c_str() : "",
                       percentText(s.precision).c_str(), percentText(s.recall).c_str(),
                       percentText(s.f1).c_str(), percentText(s.averagePrecision).c_str());
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<const Evaluator> classViewEvaluator() {
  return std::make_shared<ClassViewEvaluator>();
}

}  // namespace netsmith::eval
