#include "task/regression.h"
#include "task/evaluation_schema.h"

#include <cmath>
#include <limits>

#include "checkpoint/checkpoint.h"
#include "checkpoint/loaded_model.h"
#include "data/data_module.h"
#include "task/classification.h"
#include "task/prediction_csv.h"

namespace netsmith::task {

namespace {

/// The loss of standardised predictions `x` against standardised targets `y`, per element.
torch::Tensor elementLoss(const std::string& kind, const torch::Tensor& x, const torch::Tensor& y) {
  namespace F = torch::nn::functional;
  if (kind == "l1") return F::l1_loss(x, y, F::L1LossFuncOptions().reduction(torch::kNone));
  if (kind == "huber")
    return F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions().reduction(torch::kNone));
  return F::mse_loss(x, y, F::MSELossFuncOptions().reduction(torch::kNone));
}

/// Per target: absolute and squared errors, the target's sum and sum of squares (for R²), in
/// the data's units; the loss on standardised values.
class RegressionSums : public MetricSums {
 public:
  RegressionSums(const RegressionTask& task, std::int64_t targets, std::string loss)
      : m_task(task), m_t(targets), m_loss(std::move(loss)), m_sums(1 + 1 + 4 * targets) {}

  void add(const torch::Tensor& output, const torch::Tensor& target) override {
    const auto out = output.to(torch::kFloat);
    const auto y = target.to(torch::kFloat);
    const auto mean = torch::tensor(m_task.mean(), torch::kFloat).to(out.device());
    const auto stdv = torch::tensor(m_task.std(), torch::kFloat).to(out.device());
    m_sums[0] += elementLoss(m_loss, out, (y - mean) / stdv).mean(1).sum().item<double>();
    m_sums[1] += double(out.size(0));
    const auto pred = (out * stdv + mean).to(torch::kDouble).to(torch::kCPU);
    const auto truth = y.to(torch::kDouble).to(torch::kCPU);
    const auto e = pred - truth;
    // R²'s total sum of squares from sums about the training mean (the same constant in every
    // process, so the sums still add), which keeps Σy² - (Σy)²/n from cancelling.
    const auto centred = truth - torch::tensor(m_task.mean(), torch::kDouble);
    const auto abs = e.abs().sum(0), sq = e.pow(2).sum(0), ys = centred.sum(0),
               yy = centred.pow(2).sum(0);
    for (std::int64_t t = 0; t < m_t; ++t) {
      const auto base = std::size_t(2 + 4 * t);
      m_sums[base] += abs[t].item<double>();
      m_sums[base + 1] += sq[t].item<double>();
      m_sums[base + 2] += ys[t].item<double>();
      m_sums[base + 3] += yy[t].item<double>();
    }
  }
  std::vector<double> sums() const override { return m_sums; }
  void setSums(const std::vector<double>& v) override {
    if (v.size() != m_sums.size()) throw Error("regression sums of the wrong size");
    m_sums = v;
  }
  EvalMetrics finish() const override {
    EvalMetrics m;
    const double n = m_sums[1];
    m.samples = std::int64_t(n);
    m.loss = n > 0 ? m_sums[0] / n : noFigure();
    m.accuracy = noFigure();
    std::vector<double> mae, rmse, r2, nmae;
    double maeSum = 0, rmseSum = 0, r2Sum = 0, nmaeSum = 0;
    int nmaeCount = 0;
    for (std::int64_t t = 0; t < m_t; ++t) {
      const auto base = std::size_t(2 + 4 * t);
      const double a = n > 0 ? m_sums[base] / n : noFigure();
      const double mse = n > 0 ? m_sums[base + 1] / n : noFigure();
      const double total = m_sums[base + 3] - m_sums[base + 2] * m_sums[base + 2] / n;
      // scikit-learn: a constant target gives 1 for a perfect fit, else 0.
      const double r = n <= 0      ? noFigure()
                       : total > 0 ? 1 - m_sums[base + 1] / total
                                   : (m_sums[base + 1] == 0 ? 1.0 : 0.0);
      // The MAE in units of the target's own spread on this split (its population standard
      // deviation): comparable across targets of different units (degrees and a scale).
      const double sd = n > 0 && total > 0 ? std::sqrt(total / n) : 0.0;
      const double normalised = sd > 0 ? a / sd : noFigure();
      mae.push_back(a);
      rmse.push_back(std::sqrt(mse));
      r2.push_back(r);
      nmae.push_back(normalised);
      maeSum += a, rmseSum += std::sqrt(mse), r2Sum += r;
      if (std::isfinite(normalised)) nmaeSum += normalised, ++nmaeCount;
    }
    const double k = double(std::max<std::int64_t>(1, m_t));
    m.figures["nmae"] = nmaeCount > 0 ? nmaeSum / nmaeCount : noFigure();
    m.figures["mae"] = maeSum / k;
    m.figures["rmse"] = rmseSum / k;
    m.figures["r2"] = r2Sum / k;
    m.perClass["nmae"] = nmae;
    m.perClass["mae"] = mae;
    m.perClass["rmse"] = rmse;
    m.perClass["r2"] = r2;
    return m;
  }

 private:
  const RegressionTask& m_task;
  std::int64_t m_t;
  std::string m_loss;
  std::vector<double> m_sums;  // loss, n, then per target: |e|, e², y - mean, (y - mean)²
};

}  // namespace

RegressionTask::RegressionTask(const TaskSetup& s) : m_names(s.targets) {
  if (!s.loss.empty() && s.loss != "mse" && s.loss != "l1" && s.loss != "huber")
    throw Error("train.loss: the regression task takes \"mse\", \"l1\" or \"huber\", not \"" +
                printable(s.loss) + "\"");
  if (!s.loss.empty()) m_loss = s.loss;
  if (s.labelSmoothing > 0)
    throw Error("train.label_smoothing: the regression task has no label smoothing; remove it");
  if (s.classWeights != "none")
    throw Error("train.class_weights: the regression task has no classes to weigh; remove it");
  m_targets = std::int64_t(m_names.size());
  if (m_targets == 0 && s.outputShape.size() == 1) m_targets = s.outputShape[0];
  m_mean.assign(std::size_t(m_targets), 0.0);
  m_std.assign(std::size_t(m_targets), 1.0);
  if (s.state.is_object() && s.state.contains("target_mean")) {
    try {
      m_mean = s.state.at("target_mean").get<std::vector<double>>();
      m_std = s.state.at("target_std").get<std::vector<double>>();
    } catch (const std::exception&) {
      throw Error("task_state: target_mean and target_std must be lists of numbers");
    }
    // The scaling belongs to the targets it was measured on: the same names, in the same order.
    const Json recorded = s.state.value("targets", Json());
    if (recorded.is_array() && !m_names.empty() && recorded != Json(m_names))
      throw Error("the data's targets (" + Json(m_names).dump() +
                  ") are not the ones the model was trained on (" + recorded.dump() +
                  "); name them in data.targets, in that order");
    bool ok = std::int64_t(m_mean.size()) == m_targets && m_std.size() == m_mean.size();
    for (std::size_t t = 0; ok && t < m_std.size(); ++t)
      ok = std::isfinite(m_mean[t]) && std::isfinite(m_std[t]) && m_std[t] > 0;
    if (!ok)
      throw Error("task_state: target_mean and target_std need " + std::to_string(m_targets) +
                  " finite values (std above 0)");
  } else if (s.train && s.train->source && s.train->source->targetWidth() == m_targets &&
             !s.train->empty()) {
    // Measured on the training split, in double precision.
    std::vector<double> sum(m_mean.size(), 0.0), sq(m_mean.size(), 0.0);
    std::vector<float> row(m_mean.size());
    for (auto i : s.train->indices) {
      s.train->source->targetRow(i, row.data());
      for (std::size_t t = 0; t < sum.size(); ++t)
        sum[t] += row[t], sq[t] += double(row[t]) * row[t];
    }
    const double n = double(s.train->size());
    for (std::size_t t = 0; t < sum.size(); ++t) {
      m_mean[t] = sum[t] / n;
      const double var = std::max(0.0, sq[t] / n - m_mean[t] * m_mean[t]);
      m_std[t] = var > 1e-24 ? std::sqrt(var) : 1.0;  // a constant target: no scaling
    }
  }
  m_meanT = torch::tensor(m_mean, torch::kFloat);
  m_stdT = torch::tensor(m_std, torch::kFloat);
}

torch::Tensor RegressionTask::collate(const data::SampleSet& set,
                                      const std::vector<std::int64_t>& samples) const {
  return data::targetRows(
      set, samples, m_targets,
      std::to_string(m_targets) + " targets per sample (a regression_csv source gives them)");
}

std::vector<FigureSpec> RegressionTask::figureSpecs() {
  // The headline is unit-free: an average of MAEs in degrees and in scale would be decided by
  // the target with the largest unit.
  return {{"nmae", false,
           "normalised MAE: each target's mean absolute error over its standard deviation, "
           "averaged over the targets (unit-free; 1: no better than guessing the mean's spread)"},
          {"mae", false, "mean absolute error, averaged over the targets in their own units"},
          {"rmse", false, "root mean squared error, in the targets' units"},
          {"r2", true, "coefficient of determination (1: perfect, 0: as good as the mean)"}};
}

std::optional<Problem> RegressionTask::headProblem(const graph::GraphAnalysis& a) const {
  return exactHeadProblem(a, m_targets, "targets");
}

void RegressionTask::to(const torch::Device& device) {
  m_meanT = m_meanT.to(device);
  m_stdT = m_stdT.to(device);
}

torch::Tensor RegressionTask::predict(const torch::Tensor& output) const {
  return output.to(torch::kFloat) * m_stdT.to(output.device()) + m_meanT.to(output.device());
}

torch::Tensor RegressionTask::loss(const torch::Tensor& output, const torch::Tensor& target,
                                   const torch::Tensor&) const {
  return elementLoss(m_loss, output.to(torch::kFloat), (target - m_meanT) / m_stdT).mean();
}

std::vector<double> RegressionTask::trainSums(const torch::Tensor& output,
                                              const torch::Tensor& target) const {
  return {(predict(output.detach()) - target).abs().mean(1).sum().item<double>()};
}

std::map<std::string, double> RegressionTask::trainFigures(const std::vector<double>& sums,
                                                           std::int64_t seen) const {
  return {{"mae", seen && !sums.empty() ? sums[0] / double(seen) : noFigure()}};
}

std::unique_ptr<MetricSums> RegressionTask::evalSums() const {
  return std::make_unique<RegressionSums>(*this, m_targets, m_loss);
}

torch::Tensor RegressionTask::syntheticTarget(std::int64_t n) const {
  return torch::randn({n, std::max<std::int64_t>(1, m_targets)});
}

Json RegressionTask::state() const {
  return Json{{"target_mean", m_mean}, {"target_std", m_std}, {"targets", m_names}};
}

Json RegressionTask::evaluationSchema() const {
  return figuresEvaluationSchema({"regression evaluation",
                                  {"mae", "rmse", "r2"},
                                  {"mae", "rmse", "r2"},
                                  {"nmae"},
                                  "[target]"});
}

std::unique_ptr<PredictionWriter> RegressionTask::predictionWriter(
    const std::string& path, const data::SampleSet& set) const {
  return std::make_unique<CsvPredictionWriter>(
      path, set, namedColumns("true:", m_names, m_targets),
      namedColumns("pred:", m_names, m_targets),
      [this](const torch::Tensor& output, const torch::Tensor& target) {
        return truthAndValueCells(target, predict(output), false);
      });
}

std::vector<SampleView> RegressionTask::describeSamples(const torch::Tensor& output,
                                                        const torch::Tensor& target) const {
  const auto values = predict(output.to(torch::kCPU)).contiguous();
  // Without a target (images to predict on): the values alone, scored 0.
  const auto truth = target.defined() ? target.to(torch::kCPU, torch::kFloat).contiguous() : values;
  const auto errors = (values - truth).abs().mean(1).contiguous();
  const auto n = values.size(0), k = values.size(1);
  std::vector<SampleView> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    auto& v = out[std::size_t(i)];
    v.output.assign(values.data_ptr<float>() + i * k, values.data_ptr<float>() + (i + 1) * k);
    if (target.defined())
      v.truth.assign(truth.data_ptr<float>() + i * k, truth.data_ptr<float>() + (i + 1) * k);
    v.score = errors[i].item<double>();
  }
  return out;
}

void foldTargetScaling(checkpoint::LoadedModel& model) {
  const Json& state = model.taskState;
  if (!state.is_object() || !state.contains("target_mean")) return;  // no training: no scaling
  TaskSetup setup;
  setup.state = state;
  setup.outputShape = model.net->analysis().outputShape;
  setup.inputShape = model.net->analysis().inputShape;
  const RegressionTask task(setup);  // checks the recorded values
  const auto& a = model.net->analysis();
  std::string op;
  for (const auto& n : a.nodes)
    if (n.id == a.outputId) op = n.op;
  torch::Tensor weight, bias;
  for (const auto& p : model.net->named_parameters()) {
    if (p.key() == a.outputId + ".weight") weight = p.value();
    if (p.key() == a.outputId + ".bias") bias = p.value();
  }
  if (op != "Linear" || !weight.defined() || !bias.defined())
    throw Error("node \"" + a.outputId +
                "\": the regression's target scaling is folded into "
                "the model's last layer, which must be a Linear with a bias (it is " +
                op + ")");
  const auto stdv = torch::tensor(task.std(), torch::kFloat).to(weight.device());
  const auto mean = torch::tensor(task.mean(), torch::kFloat).to(weight.device());
  {
    torch::NoGradGuard noGrad;
    weight.mul_(stdv.unsqueeze(1));
    bias.mul_(stdv).add_(mean);
  }
  model.weights = checkpoint::moduleState(*model.net);
  // Exported, the output is in the targets' units: nothing is left to undo, so the state the
  // file records (and a task made from it, to read the file's output) scales by 1.
  Json folded{{"target_mean", model.taskState["target_mean"]},
              {"target_std", model.taskState["target_std"]}};
  model.taskState["target_mean"] = std::vector<double>(task.mean().size(), 0.0);
  model.taskState["target_std"] = std::vector<double>(task.std().size(), 1.0);
  model.taskState["folded"] = std::move(folded);
  model.taskState["folded_into"] = a.outputId;
}

ExportNotes regressionExportNotes() {
  ExportNotes notes;
  notes.output = "values";
  notes.outputDescription = "one value per target, in the targets' order and units";
  notes.postprocessing =
      "none: the target scaling learned on the training split is folded into the last layer";
  return notes;
}

}  // namespace netsmith::task
