#include "task/multilabel.h"
#include "task/evaluation_schema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "data/data_module.h"
#include "task/classification.h"
#include "task/prediction_csv.h"

namespace netsmith::task {

namespace {

constexpr int kBins = 1000;
constexpr double kFocalGamma = 2.0;

/// Average precision from (positives, negatives) per threshold step, highest score first.
double stepAp(const std::vector<std::pair<double, double>>& steps) {
  double positives = 0;
  for (const auto& s : steps)
    positives += s.first;
  if (positives <= 0) return 0.0;  // scikit-learn's value: no positive, no precision gained
  double tp = 0, fp = 0, ap = 0, lastRecall = 0;
  for (const auto& [pos, neg] : steps) {
    if (pos + neg <= 0) continue;
    tp += pos;
    fp += neg;
    const double recall = tp / positives;
    ap += (recall - lastRecall) * (tp / (tp + fp));
    lastRecall = recall;
  }
  return ap;
}

double f1Of(double tp, double fp, double fn) {
  const double d = 2 * tp + fp + fn;
  return d > 0 ? 2 * tp / d : 0.0;
}

/// bestF1Threshold over histogram steps (highest bin first): the lower edge of the bin where F1
/// peaks (a score in bin b is at least b / kBins).
double bestBinThreshold(const std::vector<std::pair<double, double>>& steps) {
  double positives = 0;
  for (const auto& st : steps)
    positives += st.first;
  if (positives <= 0) return MultiLabelTask::kThreshold;
  double tp = 0, fp = 0, best = -1, at = MultiLabelTask::kThreshold;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    tp += steps[i].first;
    fp += steps[i].second;
    const double f = f1Of(tp, fp, positives - tp);
    if (f > best) best = f, at = double(kBins - 1 - int(i)) / kBins;
  }
  return at;
}

/// The loss (unweighted binary cross-entropy, averaged over labels per sample), the counts at
/// the threshold, every score (exact average precision) and score histograms per label.
class MultiLabelSums : public MetricSums {
 public:
  MultiLabelSums(std::int64_t classes, std::vector<double> thresholds)
      : m_k(classes),
        m_thresholds(std::move(thresholds)),
        m_tp(std::size_t(classes)),
        m_fp(std::size_t(classes)),
        m_fn(std::size_t(classes)),
        m_hist(std::size_t(classes * kBins * 2)),
        m_scores(std::size_t(classes)),
        m_truth(std::size_t(classes)) {}

  void add(const torch::Tensor& output, const torch::Tensor& target) override {
    const auto logits = output.to(torch::kFloat);
    const auto t = target.to(torch::kFloat);
    m_loss += torch::binary_cross_entropy_with_logits(logits, t, {}, {}, at::Reduction::None)
                  .mean(1)
                  .sum()
                  .item<double>();
    const auto probs = torch::sigmoid(logits).to(torch::kCPU).contiguous();
    const auto truth = t.to(torch::kCPU).contiguous();
    const float* p = probs.data_ptr<float>();
    const float* y = truth.data_ptr<float>();
    const auto n = probs.size(0);
    for (std::int64_t i = 0; i < n; ++i) {
      bool allRight = true;
      for (std::int64_t k = 0; k < m_k; ++k) {
        // A non-finite output (a diverged model) ranks lowest rather than breaking the sort.
        const float raw = p[i * m_k + k];
        const float score = std::isnan(raw) ? 0.0f : raw;
        const bool positive = y[i * m_k + k] > 0.5f;
        const bool predicted = score >= float(m_thresholds[std::size_t(k)]);
        const auto kk = std::size_t(k);
        if (predicted && positive) ++m_tp[kk];
        if (predicted && !positive) ++m_fp[kk];
        if (!predicted && positive) ++m_fn[kk];
        allRight = allRight && predicted == positive;
        const int bin = int(std::clamp(score * float(kBins), 0.0f, float(kBins - 1)));
        ++m_hist[(kk * kBins + std::size_t(bin)) * 2 + (positive ? 0 : 1)];
        m_scores[kk].push_back(score);
        m_truth[kk].push_back(positive ? 1 : 0);
      }
      if (allRight) ++m_subset;
    }
    m_samples += double(n);
    m_localSamples += double(n);
  }

  std::vector<double> sums() const override {
    std::vector<double> v{m_loss, m_samples, m_subset};
    for (const auto* counts : {&m_tp, &m_fp, &m_fn})
      v.insert(v.end(), counts->begin(), counts->end());
    v.insert(v.end(), m_hist.begin(), m_hist.end());
    return v;
  }

  void setSums(const std::vector<double>& v) override {
    const std::size_t k = std::size_t(m_k);
    if (v.size() != 3 + 3 * k + m_hist.size()) throw Error("multi-label sums of the wrong size");
    m_loss = v[0], m_samples = v[1], m_subset = v[2];
    std::copy(v.begin() + 3, v.begin() + 3 + k, m_tp.begin());
    std::copy(v.begin() + 3 + k, v.begin() + 3 + 2 * k, m_fp.begin());
    std::copy(v.begin() + 3 + 2 * k, v.begin() + 3 + 3 * k, m_fn.begin());
    std::copy(v.begin() + 3 + 3 * k, v.end(), m_hist.begin());
  }

  EvalMetrics finish() const override {
    EvalMetrics m;
    m.samples = std::int64_t(m_samples);
    m.loss = m_samples > 0 ? m_loss / m_samples : noFigure();
    m.accuracy = noFigure();
    // The scores are this process's alone; once other processes' sums are added, the
    // histograms are what all of them share.
    const bool exact = m_samples == m_localSamples;
    std::vector<double> ap, f1, threshold, tuned;
    double apSum = 0, apCount = 0, tp = 0, fp = 0, fn = 0, f1Sum = 0;
    for (std::size_t k = 0; k < std::size_t(m_k); ++k) {
      double a = 0;
      if (exact) {
        a = averagePrecision(m_scores[k], m_truth[k]);
        tuned.push_back(bestF1Threshold(m_scores[k], m_truth[k]));
      } else {
        std::vector<std::pair<double, double>> steps;
        for (int b = kBins - 1; b >= 0; --b)
          steps.emplace_back(m_hist[(k * kBins + std::size_t(b)) * 2],
                             m_hist[(k * kBins + std::size_t(b)) * 2 + 1]);
        a = stepAp(steps);
        tuned.push_back(bestBinThreshold(steps));
      }
      ap.push_back(a);
      apSum += a, ++apCount;
      f1.push_back(f1Of(m_tp[k], m_fp[k], m_fn[k]));
      f1Sum += f1.back();
      threshold.push_back(m_thresholds[k]);
      tp += m_tp[k], fp += m_fp[k], fn += m_fn[k];
    }
    m.figures["map"] = apCount > 0 ? apSum / apCount : noFigure();
    m.figures["f1_micro"] = m_samples > 0 ? f1Of(tp, fp, fn) : noFigure();
    m.figures["f1_macro"] = m_k > 0 && m_samples > 0 ? f1Sum / double(m_k) : noFigure();
    m.figures["subset_accuracy"] = m_samples > 0 ? m_subset / m_samples : noFigure();
    m.perClass["ap"] = ap;
    m.perClass["f1"] = f1;
    m.perClass["threshold"] = threshold;
    m.perClass["tuned_threshold"] = tuned;
    return m;
  }

 private:
  std::int64_t m_k;
  std::vector<double> m_thresholds;
  double m_loss = 0, m_samples = 0, m_subset = 0, m_localSamples = 0;
  std::vector<double> m_tp, m_fp, m_fn;
  std::vector<double> m_hist;  // [label][bin][positive, negative]
  std::vector<std::vector<float>> m_scores;
  std::vector<std::vector<std::uint8_t>> m_truth;
};

}  // namespace

double averagePrecision(const std::vector<float>& scores, const std::vector<std::uint8_t>& truth) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<std::pair<double, double>> steps;
  for (std::size_t i = 0; i < order.size(); ++i) {
    // Equal scores are one threshold.
    if (i == 0 || scores[order[i]] != scores[order[i - 1]]) steps.emplace_back(0.0, 0.0);
    (truth[order[i]] ? steps.back().first : steps.back().second) += 1;
  }
  return stepAp(steps);
}

double bestF1Threshold(const std::vector<float>& scores, const std::vector<std::uint8_t>& truth) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  double positives = 0;
  for (auto t : truth)
    positives += t ? 1 : 0;
  if (positives <= 0) return MultiLabelTask::kThreshold;
  double tp = 0, fp = 0, best = -1, at = MultiLabelTask::kThreshold;
  for (std::size_t i = 0; i < order.size(); ++i) {
    (truth[order[i]] ? tp : fp) += 1;
    // Equal scores fall on the same side of any threshold: judged after the last of them.
    if (i + 1 < order.size() && scores[order[i + 1]] == scores[order[i]]) continue;
    const double f = f1Of(tp, fp, positives - tp);
    if (f > best) best = f, at = double(scores[order[i]]);
  }
  return at;
}

torch::Tensor multiLabelLoss(const torch::Tensor& logits, const torch::Tensor& targets,
                             const torch::Tensor& posWeight, double focalGamma) {
  const auto x = logits.to(torch::kFloat);
  if (focalGamma <= 0)
    return torch::binary_cross_entropy_with_logits(x, targets, {}, posWeight, at::Reduction::Mean);
  const auto ce =
      torch::binary_cross_entropy_with_logits(x, targets, {}, posWeight, at::Reduction::None);
  const auto p = torch::sigmoid(x);
  const auto pt = p * targets + (1 - p) * (1 - targets);
  return (ce * (1 - pt).pow(focalGamma)).mean();
}

MultiLabelTask::MultiLabelTask(const TaskSetup& s)
    : m_classes(s.dataClasses),
      m_names(s.classes),
      m_thresholds(std::size_t(std::max<std::int64_t>(0, s.dataClasses)), kThreshold) {
  if (s.state.is_object() && s.state.contains("thresholds")) {
    const Json& t = s.state["thresholds"];
    if (!t.is_array() || std::int64_t(t.size()) != m_classes ||
        !std::all_of(t.begin(), t.end(), [](const Json& v) {
          return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1;
        }))
      throw Error("task_state.thresholds: not one threshold in [0, 1] per label (" +
                  std::to_string(m_classes) + " labels)");
    for (std::size_t k = 0; k < m_thresholds.size(); ++k)
      m_thresholds[k] = t[k].get<double>();
  }
  if (s.loss == "focal") {
    m_focalGamma = kFocalGamma;
  } else if (!s.loss.empty() && s.loss != "bce") {
    throw Error("train.loss: the multilabel task takes \"bce\" or \"focal\", not \"" +
                printable(s.loss) + "\"");
  }
  if (s.labelSmoothing > 0)
    throw Error("train.label_smoothing: the multilabel task has no label smoothing; remove it");
  if (s.classWeights == "none") return;
  std::vector<double> w(static_cast<std::size_t>(m_classes), 1.0);
  if (s.classWeights == "auto") {
    // BCE's pos_weight: negatives over positives of each label on the training split.
    if (s.train && s.train->source && s.train->source->targetWidth() == m_classes) {
      std::vector<double> positives(w.size(), 0.0);
      for (auto i : s.train->indices)
        for (const auto k : s.train->source->positiveLabels(i))
          positives[std::size_t(k)] += 1;
      const double n = double(s.train->size());
      for (std::size_t k = 0; k < w.size(); ++k)
        w[k] = positives[k] > 0 ? (n - positives[k]) / positives[k] : 1.0;
    }
  } else {
    if (std::int64_t(s.classWeightValues.size()) != m_classes)
      throw Error("train.class_weights has " + std::to_string(s.classWeightValues.size()) +
                  " values but there are " + std::to_string(m_classes) + " labels");
    w = s.classWeightValues;
  }
  m_posWeight = torch::tensor(w, torch::kFloat);
}

torch::Tensor MultiLabelTask::collate(const data::SampleSet& set,
                                      const std::vector<std::int64_t>& samples) const {
  return data::targetRows(set, samples, m_classes,
                          "label sets for " + std::to_string(m_classes) +
                              " classes (a multilabel_csv source gives them)");
}

std::vector<FigureSpec> MultiLabelTask::figureSpecs() {
  return {{"map", true, "mean over labels of the average precision"},
          {"f1_micro", true, "F1 over all labels' decisions at the threshold"},
          {"f1_macro", true, "the mean of the labels' F1 at the threshold"},
          {"subset_accuracy", true, "the share of samples whose every label is right"}};
}

std::optional<Problem> MultiLabelTask::headProblem(const graph::GraphAnalysis& a) const {
  return exactHeadProblem(a, m_classes, "labels");
}

void MultiLabelTask::to(const torch::Device& device) {
  if (m_posWeight.defined()) m_posWeight = m_posWeight.to(device);
}

torch::Tensor MultiLabelTask::loss(const torch::Tensor& output, const torch::Tensor& target,
                                   const torch::Tensor&) const {
  return multiLabelLoss(output, target, m_posWeight, m_focalGamma);
}

std::vector<double> MultiLabelTask::trainSums(const torch::Tensor& output,
                                              const torch::Tensor& target) const {
  const auto predicted = torch::sigmoid(output.to(torch::kFloat))
                             .ge(torch::tensor(m_thresholds, torch::kFloat).to(output.device()));
  const auto right = predicted.eq(target.gt(0.5)).all(1);
  return {double(right.sum().item<std::int64_t>())};
}

std::map<std::string, double> MultiLabelTask::trainFigures(const std::vector<double>& sums,
                                                           std::int64_t seen) const {
  return {{"subset_accuracy", seen && !sums.empty() ? sums[0] / double(seen) : noFigure()}};
}

std::unique_ptr<MetricSums> MultiLabelTask::evalSums() const {
  return std::make_unique<MultiLabelSums>(m_classes, m_thresholds);
}

torch::Tensor MultiLabelTask::syntheticTarget(std::int64_t n) const {
  return torch::randint(0, 2, {n, std::max<std::int64_t>(1, m_classes)}, torch::kFloat);
}

Json MultiLabelTask::evaluationSchema() const {
  return figuresEvaluationSchema({"multi-label evaluation",
                                  {"map", "f1_micro", "f1_macro", "subset_accuracy"},
                                  {"ap", "f1", "threshold"},
                                  {"tuned_threshold"}});
}

std::unique_ptr<PredictionWriter> MultiLabelTask::predictionWriter(
    const std::string& path, const data::SampleSet& set) const {
  return std::make_unique<CsvPredictionWriter>(
      path, set, namedColumns("true:", m_names, m_classes),
      namedColumns("prob:", m_names, m_classes),
      [](const torch::Tensor& output, const torch::Tensor& target) {
        return truthAndValueCells(target, torch::sigmoid(output), true);
      });
}

std::vector<SampleView> MultiLabelTask::describeSamples(const torch::Tensor& output,
                                                        const torch::Tensor& target) const {
  const auto logits = output.to(torch::kCPU, torch::kFloat).contiguous();
  // Without a target (images to predict on): the probabilities alone, scored 0.
  const auto truth = target.defined() ? target.to(torch::kCPU, torch::kFloat).contiguous()
                                      : torch::zeros_like(logits);
  const auto losses = target.defined() ? torch::binary_cross_entropy_with_logits(
                                             logits, truth, {}, {}, at::Reduction::None)
                                             .mean(1)
                                             .contiguous()
                                       : torch::zeros({logits.size(0)});
  // A non-finite output (a diverged model) scores 0, as the figures count it (MultiLabelSums).
  const auto probs = torch::nan_to_num(torch::sigmoid(logits), 0.0, 1.0, 0.0).contiguous();
  const auto n = logits.size(0), k = logits.size(1);
  std::vector<SampleView> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    auto& v = out[std::size_t(i)];
    v.output.assign(probs.data_ptr<float>() + i * k, probs.data_ptr<float>() + (i + 1) * k);
    if (target.defined())
      v.truth.assign(truth.data_ptr<float>() + i * k, truth.data_ptr<float>() + (i + 1) * k);
    v.score = losses[i].item<double>();
  }
  return out;
}

Json MultiLabelTask::state() const {
  return Json{{"thresholds", m_thresholds}};
}

void MultiLabelTask::adoptState(const Json& state) {
  if (!state.is_object() || !state.contains("thresholds")) return;
  const Json& t = state["thresholds"];
  if (t.is_array() && t.size() == m_thresholds.size())
    for (std::size_t k = 0; k < m_thresholds.size(); ++k)
      m_thresholds[k] = t[k].get<double>();
}

void MultiLabelTask::adoptValidation(const EvalMetrics& validation) {
  const auto it = validation.perClass.find("tuned_threshold");
  if (it == validation.perClass.end() || it->second.size() != m_thresholds.size()) return;
  for (std::size_t k = 0; k < m_thresholds.size(); ++k)
    if (std::isfinite(it->second[k])) m_thresholds[k] = it->second[k];
}

ExportNotes multiLabelExportNotes() {
  ExportNotes notes;
  notes.output = "logits";
  notes.outputDescription = "one score per class, in the order of the classes";
  notes.postprocessing =
      "sigmoid gives each label's probability; a label is present when it reaches its "
      "threshold (metadata task_state.thresholds, tuned on validation; 0.5 without one)";
  notes.classScores = false;
  return notes;
}

}  // namespace netsmith::task
