#include "task/classification.h"
#include "task/prediction_csv.h"

#include <cmath>

#include "common/shape.h"
#include "data/csv_table.h"
#include "data/data_module.h"

namespace netsmith::task {

torch::Tensor classificationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                                 const torch::Tensor& softTargets, double labelSmoothing,
                                 const torch::Tensor& weights) {
  const auto x = logits.to(torch::kFloat);
  if (!softTargets.defined()) {
    auto options = torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(labelSmoothing);
    if (weights.defined()) options.weight(weights);
    return torch::nn::functional::cross_entropy(x, labels, options);
  }
  const auto k = static_cast<double>(x.size(1));
  auto t = softTargets.to(x.device(), torch::kFloat);
  if (labelSmoothing > 0) t = t * (1.0 - labelSmoothing) + labelSmoothing / k;
  if (weights.defined()) t = t * weights.unsqueeze(0);
  return -(t * torch::log_softmax(x, 1)).sum(1).mean();
}

ConfusionCounter::ConfusionCounter(std::int64_t numClasses)
    : m_classes(numClasses), m_counts(static_cast<std::size_t>(numClasses * numClasses), 0) {}

ConfusionCounter::ConfusionCounter(std::int64_t numClasses, std::vector<std::int64_t> counts)
    : m_classes(numClasses), m_counts(std::move(counts)) {
  m_counts.resize(static_cast<std::size_t>(numClasses * numClasses), 0);
  for (auto c : m_counts)
    m_samples += c;
}

void ConfusionCounter::add(const torch::Tensor& predicted, const torch::Tensor& labels) {
  const auto p = predicted.to(torch::kCPU, torch::kLong).contiguous();
  const auto l = labels.to(torch::kCPU, torch::kLong).contiguous();
  const auto* pp = p.data_ptr<std::int64_t>();
  const auto* lp = l.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < p.numel(); ++i) {
    if (lp[i] < 0 || lp[i] >= m_classes || pp[i] < 0 || pp[i] >= m_classes) continue;
    ++m_counts[static_cast<std::size_t>(lp[i] * m_classes + pp[i])];
    ++m_samples;
  }
}

EvalMetrics ConfusionCounter::metrics(double lossSum) const {
  EvalMetrics m;
  m.samples = m_samples;
  m.loss = m_samples ? lossSum / double(m_samples) : std::nan("");
  std::int64_t correct = 0;
  m.confusion.assign(static_cast<std::size_t>(m_classes), {});
  for (std::int64_t t = 0; t < m_classes; ++t) {
    std::int64_t row = 0;
    auto& out = m.confusion[static_cast<std::size_t>(t)];
    for (std::int64_t p = 0; p < m_classes; ++p) {
      const auto c = m_counts[static_cast<std::size_t>(t * m_classes + p)];
      out.push_back(c);
      row += c;
    }
    const auto hit = m_counts[static_cast<std::size_t>(t * m_classes + t)];
    correct += hit;
    m.perClassAccuracy.push_back(row ? double(hit) / double(row) : std::nan(""));
  }
  m.accuracy = m_samples ? double(correct) / double(m_samples) : std::nan("");
  m.figures["accuracy"] = m.accuracy;
  return m;
}

namespace {

/// The Linear that makes the output scores: the last one in the model (or the output node).
std::string scoringNode(const graph::GraphAnalysis& a) {
  std::string linear;
  for (const auto& n : a.nodes)
    if (n.op == "Linear") linear = n.id;
  return linear;
}

/// The output must be a vector of `count` values (`exact`: no more either) for `what`
/// ("classes", "labels", "targets").
std::optional<Problem> vectorHeadProblem(const graph::GraphAnalysis& a, std::int64_t count,
                                         const std::string& what, const std::string& needs,
                                         const std::string& unit, bool exact) {
  if (!a.ok() || count <= 0) return std::nullopt;
  const std::string counted = std::to_string(count) + " " + what;
  if (a.outputShape.size() != 1) {
    return Problem{
        "node \"" + a.outputId + "\"",
        "the model's output is " + formatShape(a.outputShape) + "; " + needs +
            " for each of the data's " + counted,
        a.outputId,
        "end the model with Flatten and a Linear of " + std::to_string(count) + " outputs"};
  }
  if (a.outputShape[0] == count) return std::nullopt;
  const std::string linear = scoringNode(a);
  // Spare outputs are a head's (a Linear of more classes than the data has, fine-tuned on
  // fewer); the features of a Flatten are no scores however many there are.
  const auto* head = linear.empty() ? nullptr : a.find(linear);
  if (!exact && a.outputShape[0] > count && head && head->outputShape == a.outputShape)
    return std::nullopt;
  const std::string where = linear.empty() ? a.outputId : linear;
  Problem p{"node \"" + where + "\"",
            "the model outputs " + std::to_string(a.outputShape[0]) + " " + unit +
                " but the data has " + counted,
            where, ""};
  p.fix = linear.empty() ? "end the model with a Linear of " + std::to_string(count) + " outputs"
                         : "set " + linear + ".out_features to " + std::to_string(count);
  return p;
}

}  // namespace

std::optional<Problem> classifierHeadProblem(const graph::GraphAnalysis& a,
                                             std::int64_t numClasses) {
  return vectorHeadProblem(a, numClasses, "classes", "a classifier needs one score", "scores",
                           false);
}

std::optional<Problem> exactHeadProblem(const graph::GraphAnalysis& a, std::int64_t count,
                                        const std::string& what) {
  return vectorHeadProblem(a, count, what, "the task needs one output", "values", true);
}

namespace {

/// The loss (unsmoothed, unweighted cross-entropy) and the confusion counts of a split.
class ClassificationSums : public MetricSums {
 public:
  explicit ClassificationSums(std::int64_t classes) : m_classes(classes), m_counter(classes) {}
  void add(const torch::Tensor& output, const torch::Tensor& target) override {
    const auto logits = output.to(torch::kFloat);
    const auto loss = torch::nn::functional::cross_entropy(
        logits, target, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    m_lossSum += loss.item<double>();
    m_counter.add(logits.argmax(1), target);
  }
  std::vector<double> sums() const override {
    std::vector<double> v{m_lossSum};
    for (auto c : m_counter.counts())
      v.push_back(double(c));
    return v;
  }
  void setSums(const std::vector<double>& v) override {
    m_lossSum = v.empty() ? 0.0 : v[0];
    std::vector<std::int64_t> counts;
    for (std::size_t i = 1; i < v.size(); ++i)
      counts.push_back(std::llround(v[i]));
    m_counter = ConfusionCounter(m_classes, std::move(counts));
  }
  EvalMetrics finish() const override { return m_counter.metrics(m_lossSum); }

 private:
  std::int64_t m_classes;
  ConfusionCounter m_counter;
  double m_lossSum = 0;
};

}  // namespace

ClassificationTask::ClassificationTask(const TaskSetup& s)
    : m_names(s.classes),
      m_dataClasses(s.dataClasses),
      m_classes(s.dataClasses),
      m_labelSmoothing(s.labelSmoothing) {
  // A model with more outputs than the data has classes still trains (the extra scores are
  // never a target): batches and figures count the model's classes.
  if (s.outputShape.size() == 1) m_classes = std::max(m_classes, s.outputShape[0]);
  if (!s.loss.empty() && s.loss != "cross_entropy")
    throw Error("train.loss: the classification task takes \"cross_entropy\", not \"" +
                printable(s.loss) + "\"");
  if (s.classWeights == "none") return;
  std::vector<double> w(static_cast<std::size_t>(m_classes), 1.0);
  if (s.classWeights == "auto") {
    if (s.train) {
      const auto counts = data::classCounts(*s.train, m_classes);
      for (std::size_t c = 0; c < w.size(); ++c)
        w[c] = counts[c] ? double(s.train->size()) / double(m_classes * counts[c]) : 0.0;
    }
  } else {
    if (static_cast<std::int64_t>(s.classWeightValues.size()) != m_classes) {
      throw Error("train.class_weights has " + std::to_string(s.classWeightValues.size()) +
                  " values but there are " + std::to_string(m_classes) + " classes");
    }
    w = s.classWeightValues;
  }
  m_weights = torch::tensor(w, torch::kFloat);
}

torch::Tensor ClassificationTask::collate(const data::SampleSet& set,
                                          const std::vector<std::int64_t>& samples) const {
  std::vector<std::int64_t> labels;
  labels.reserve(samples.size());
  for (auto k : samples)
    labels.push_back(set.label(k));
  return torch::tensor(labels, torch::kLong);
}

std::vector<FigureSpec> ClassificationTask::figureSpecs() {
  return {{"accuracy", true, "the share of samples whose highest score is their class", true}};
}

std::optional<Problem> ClassificationTask::headProblem(const graph::GraphAnalysis& a) const {
  return classifierHeadProblem(a, m_dataClasses);
}

void ClassificationTask::to(const torch::Device& device) {
  if (m_weights.defined()) m_weights = m_weights.to(device);
}

torch::Tensor ClassificationTask::loss(const torch::Tensor& output, const torch::Tensor& target,
                                       const torch::Tensor& softTarget) const {
  return classificationLoss(output, target, softTarget, m_labelSmoothing, m_weights);
}

std::vector<double> ClassificationTask::trainSums(const torch::Tensor& output,
                                                  const torch::Tensor& target) const {
  return {double(output.argmax(1).eq(target).sum().item<std::int64_t>())};
}

std::map<std::string, double> ClassificationTask::trainFigures(const std::vector<double>& sums,
                                                               std::int64_t seen) const {
  const double correct = sums.empty() ? 0.0 : sums[0];
  return {{"accuracy", seen ? correct / double(seen) : std::nan("")}};
}

std::unique_ptr<MetricSums> ClassificationTask::evalSums() const {
  return std::make_unique<ClassificationSums>(m_classes);
}

torch::Tensor ClassificationTask::syntheticTarget(std::int64_t n) const {
  return torch::randint(0, std::max<std::int64_t>(1, m_classes), {n}, torch::kLong);
}

Json ClassificationTask::evaluationSchema() const {
  const Json number{{"type", {"number", "null"}}};
  const Json count{{"type", "integer"}, {"minimum", 0}};
  return Json{
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"title", "classification evaluation"},
      {"type", "object"},
      {"required", {"loss", "accuracy", "samples", "per_class_accuracy", "confusion", "figures"}},
      {"properties",
       {{"loss", number},
        {"accuracy", number},
        {"samples", count},
        {"per_class_accuracy",
         {{"type", "array"}, {"items", number}, {"description", "[class]; null: no sample"}}},
        {"confusion",
         {{"type", "array"},
          {"items", {{"type", "array"}, {"items", count}}},
          {"description", "[true class][predicted class]"}}},
        {"figures",
         {{"type", "object"}, {"required", {"accuracy"}}, {"properties", {{"accuracy", number}}}}},
        {"temperature",
         {{"type", "number"},
          {"description", "the logits were divided by it (1: as the model gives them)"}}},
        {"calibration",
         {{"type", "object"},
          {"description",
           "15 equal-width confidence bins, (b/15, (b+1)/15]; ECE = sum of count/samples x "
           "|accuracy - confidence|, MCE the largest gap"},
          {"properties",
           {{"ece", number},
            {"mce", number},
            {"samples", count},
            {"bins", {{"type", "array"}, {"maxItems", 15}}}}}}},
        {"tta",
         {{"type", "object"},
          {"description",
           "test-time augmentation (--tta): the views averaged, and the accuracy of the picture "
           "alone on the same samples; gain = accuracy - accuracy_without"},
          {"properties",
           {{"views", {{"enum", {"flip", "crops"}}}},
            {"count", count},
            {"accuracy_without", number},
            {"gain", number}}}}},
        {"temperature_fit",
         {{"type", "object"},
          {"description", "temperature scaling fitted on the validation split (--fit-temperature)"},
          {"properties",
           {{"temperature", number},
            {"samples", count},
            {"nll_before", number},
            {"nll_after", number},
            {"ece_before", number},
            {"ece_after", number}}}}}}}};
}

std::vector<SampleView> ClassificationTask::describeSamples(const torch::Tensor& output,
                                                            const torch::Tensor& target) const {
  const auto logits = output.to(torch::kCPU, torch::kFloat).contiguous();
  const auto probs = torch::softmax(logits, 1).contiguous();
  const auto losses =
      target.defined()
          ? torch::nn::functional::cross_entropy(
                logits, target.to(torch::kCPU, torch::kLong),
                torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
                .contiguous()
          : torch::zeros({logits.size(0)});
  const auto n = probs.size(0), k = probs.size(1);
  std::vector<SampleView> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    auto& v = out[std::size_t(i)];
    v.output.assign(probs.data_ptr<float>() + i * k, probs.data_ptr<float>() + (i + 1) * k);
    v.score = losses[i].item<double>();
  }
  return out;
}

std::unique_ptr<PredictionWriter> ClassificationTask::predictionWriter(
    const std::string& path, const data::SampleSet& set) const {
  std::vector<std::string> columns{"prediction", "probability"};
  const auto probs = namedColumns("prob:", m_names, m_classes);
  columns.insert(columns.end(), probs.begin(), probs.end());
  const auto k = m_classes;
  const auto names = namedColumns("", m_names, m_classes);
  return std::make_unique<CsvPredictionWriter>(
      path, set, std::vector<std::string>{"label"}, columns,
      [k, names](const torch::Tensor& output, const torch::Tensor& target) {
        const auto probs = torch::softmax(output, 1).contiguous();
        const auto labels = target.defined() ? target.to(torch::kLong).contiguous() : target;
        const float* p = probs.data_ptr<float>();
        std::vector<std::vector<std::string>> rows;
        for (std::int64_t i = 0; i < probs.size(0); ++i) {
          std::vector<std::string> row;
          if (labels.defined()) row.push_back(std::to_string(labels.data_ptr<std::int64_t>()[i]));
          // The most probable class (the first of equals, as argmax picks), by name.
          std::int64_t best = 0;
          for (std::int64_t c = 1; c < k; ++c)
            if (p[i * k + c] > p[i * k + best]) best = c;
          row.push_back(data::csvTextCell(names[std::size_t(best)]));
          row.push_back(floatCell(p[i * k + best]));
          for (std::int64_t c = 0; c < k; ++c)
            row.push_back(floatCell(p[i * k + c]));
          rows.push_back(std::move(row));
        }
        return rows;
      });
}

}  // namespace netsmith::task
