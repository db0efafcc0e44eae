#pragma once

// Regression through the Task seam: a sample carries one number per target (a regression_csv
// row, data/table_sources.cpp), the model ends in one output per target. Targets are
// standardised on the training split: the model learns (y - mean) / std, its prediction is
// output * std + mean. The mean and std are the task's state (kept in the checkpoint) and every
// export folds them into the model's last Linear, so an exported file predicts in the data's
// units. Losses (train.loss): mse (default), l1, huber (delta 1, on standardised values). The
// figures, on predictions in the data's units, as scikit-learn's metrics with
// multioutput="uniform_average" compute them:
//   mae   mean over targets of the mean absolute error
//   rmse  mean over targets of the root mean squared error
//   r2    mean over targets of 1 - SS_res / SS_tot
// Per target: "mae", "rmse", "r2".
#include <cstdint>
#include <vector>

#include "task/task.h"

namespace netsmith::task {

class RegressionTask : public Task {
 public:
  /// Throws netsmith::Error naming train.loss, data.targets or the recorded state when they do
  /// not fit.
  explicit RegressionTask(const TaskSetup& setup);

  torch::Tensor collate(const data::SampleSet& set,
                        const std::vector<std::int64_t>& samples) const override;
  std::string name() const override { return "regression"; }
  TargetSpec target() const override { return {TargetKind::RealVector, false, false}; }
  std::vector<FigureSpec> figures() const override { return figureSpecs(); }
  /// What figures() gives, known before a task is made (TaskDef::figures).
  static std::vector<FigureSpec> figureSpecs();
  std::optional<Problem> headProblem(const graph::GraphAnalysis& analysis) const override;
  std::int64_t numClasses() const override { return 0; }
  void to(const torch::Device& device) override;
  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target,
                     const torch::Tensor& softTarget) const override;
  std::vector<double> trainSums(const torch::Tensor& output,
                                const torch::Tensor& target) const override;
  std::size_t trainSumCount() const override { return 1; }
  std::map<std::string, double> trainFigures(const std::vector<double>& sums,
                                             std::int64_t seen) const override;
  std::unique_ptr<MetricSums> evalSums() const override;
  torch::Tensor syntheticTarget(std::int64_t n) const override;
  Json evaluationSchema() const override;
  Json state() const override;
  std::unique_ptr<PredictionWriter> predictionWriter(const std::string& path,
                                                     const data::SampleSet& set) const override;
  std::vector<SampleView> describeSamples(const torch::Tensor& output,
                                          const torch::Tensor& target) const override;

  /// The model's output in the data's units.
  torch::Tensor predict(const torch::Tensor& output) const;
  const std::vector<double>& mean() const { return m_mean; }
  const std::vector<double>& std() const { return m_std; }

 private:
  std::int64_t m_targets = 0;
  std::vector<std::string> m_names;
  std::string m_loss = "mse";
  std::vector<double> m_mean, m_std;
  torch::Tensor m_meanT, m_stdT;
};

ExportNotes regressionExportNotes();

/// Folds the recorded target scaling (model.taskState) into the model's last Linear
/// (weight x std, bias x std + mean), so its output is in the targets' units. Throws
/// netsmith::Error naming the output node when the model does not end in a Linear with a bias.
void foldTargetScaling(checkpoint::LoadedModel& model);

}  // namespace netsmith::task
