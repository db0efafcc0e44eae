#pragma once

// A task written only in the tests (a two-output regression: where the blob of the blob data
// set sits, as a row and a column), with its figures, its own target statistics, and the
// program's registries with it added: what tests/core/task_seam_test.cpp and
// tests/ui/test_task_test.cpp run through every stage without a line outside the tests
// knowing it.
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset_source.h"
#include "data/target_summary.h"
#include "registries/registries.h"
#include "task/task.h"

namespace netsmith::testutil {

/// The blob's quadrant of class c as (row, column): class 0 top-left (0, 0) ... 3 (1, 1).
inline std::pair<float, float> quadrantOf(std::int64_t label) {
  return {float(label / 2), float(label % 2)};
}

/// Mean squared error, mean absolute error and root mean squared error over both outputs.
class QuadrantSums : public task::MetricSums {
 public:
  void add(const torch::Tensor& output, const torch::Tensor& target) override {
    const auto d = output.to(torch::kFloat) - target;
    m_loss += d.pow(2).mean(1).sum().item<double>();
    m_abs += d.abs().sum().item<double>();
    m_sq += d.pow(2).sum().item<double>();
    m_samples += double(output.size(0));
  }
  std::vector<double> sums() const override { return {m_loss, m_abs, m_sq, m_samples}; }
  void setSums(const std::vector<double>& v) override {
    m_loss = v.at(0), m_abs = v.at(1), m_sq = v.at(2), m_samples = v.at(3);
  }
  task::EvalMetrics finish() const override {
    task::EvalMetrics m;
    m.samples = std::int64_t(m_samples);
    m.loss = m_samples > 0 ? m_loss / m_samples : std::nan("");
    m.accuracy = std::nan("");
    m.figures["mae"] = m_samples > 0 ? m_abs / (2 * m_samples) : std::nan("");
    m.figures["rmse"] = m_samples > 0 ? std::sqrt(m_sq / (2 * m_samples)) : std::nan("");
    return m;
  }

 private:
  double m_loss = 0, m_abs = 0, m_sq = 0, m_samples = 0;
};

class QuadrantRegression : public task::Task {
 public:
  torch::Tensor collate(const data::SampleSet& set,
                        const std::vector<std::int64_t>& samples) const override {
    auto t = torch::empty({std::int64_t(samples.size()), 2}, torch::kFloat);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto [row, col] = quadrantOf(set.label(samples[i]));
      t[std::int64_t(i)][0] = row;
      t[std::int64_t(i)][1] = col;
    }
    return t;
  }
  std::string name() const override { return "quadrant_regression"; }
  task::TargetSpec target() const override { return {task::TargetKind::RealVector, false, false}; }
  static std::vector<task::FigureSpec> figureSpecs() {
    return {{"mae", false, "mean absolute error"}, {"rmse", false, "root mean squared error"}};
  }
  std::vector<task::FigureSpec> figures() const override { return figureSpecs(); }
  std::optional<Problem> headProblem(const graph::GraphAnalysis& a) const override {
    if (!a.ok() || a.outputShape == std::vector<std::int64_t>{2}) return std::nullopt;
    return Problem{"node \"" + a.outputId + "\"", "this task needs 2 outputs (row, column)",
                   a.outputId, "end the model with a Linear of 2 outputs"};
  }
  std::int64_t numClasses() const override { return 0; }
  void to(const torch::Device&) override {}
  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target,
                     const torch::Tensor&) const override {
    return torch::mse_loss(output.to(torch::kFloat), target);
  }
  std::vector<double> trainSums(const torch::Tensor& output,
                                const torch::Tensor& target) const override {
    return {(output.detach().to(torch::kFloat) - target).abs().sum().item<double>()};
  }
  std::size_t trainSumCount() const override { return 1; }
  std::map<std::string, double> trainFigures(const std::vector<double>& sums,
                                             std::int64_t seen) const override {
    return {{"mae", seen ? sums.at(0) / (2.0 * double(seen)) : std::nan("")}};
  }
  std::unique_ptr<task::MetricSums> evalSums() const override {
    return std::make_unique<QuadrantSums>();
  }
  torch::Tensor syntheticTarget(std::int64_t n) const override { return torch::rand({n, 2}); }
  Json evaluationSchema() const override {
    return Json{{"type", "object"}, {"required", {"loss", "samples", "figures"}}};
  }
};

/// The test task's own count of its training targets (what data-stats and the Data page show
/// for it): images per blob row and column.
class QuadrantStatistics final : public data::TargetStatistics {
 public:
  void begin(const data::DatasetSource&, const std::vector<std::string>&,
             const std::vector<std::string>&) override {}
  void add(const data::DatasetSource& source, std::int64_t index) override {
    const auto [row, col] = quadrantOf(source.label(index));
    ++m_rows[std::size_t(row)];
    ++m_cols[std::size_t(col)];
  }
  data::TargetSummary summary() const override {
    data::TargetSummary s;
    s.jsonKey = "blob_positions";
    s.json = Json{{"rows", m_rows}, {"columns", m_cols}};
    s.table.columns = {"position", "train images"};
    s.table.rows = {{"top row", std::to_string(m_rows[0])},
                    {"bottom row", std::to_string(m_rows[1])},
                    {"left column", std::to_string(m_cols[0])},
                    {"right column", std::to_string(m_cols[1])}};
    s.view = s.table;
    s.viewTitle = "Blob positions";
    s.chart.title = "Blob rows";
    s.chart.names = {"top", "bottom"};
    s.chart.series.push_back({"train", {}, {double(m_rows[0]), double(m_rows[1])}});
    return s;
  }

 private:
  std::array<std::int64_t, 2> m_rows{}, m_cols{};
};

/// The program's registries with the test's task added (a copy: the built-ins stay as they are).
inline RegistriesPtr withQuadrants() {
  auto registries = std::make_shared<Registries>(*Registries::builtins());
  task::TaskDef def{
      "quadrant_regression",
      "the blob's row and column",
      "tasks",
      [](const task::TaskSetup&) { return std::make_shared<QuadrantRegression>(); },
      {"position", "row and column of the blob, 0 to 1", "none: read the two numbers"},
      data::TargetKind::ClassIndex,
      {}};
  def.figures = QuadrantRegression::figureSpecs();
  def.statistics = [] { return std::make_unique<QuadrantStatistics>(); };
  registries->tasks.add(std::move(def));
  return registries;
}

}  // namespace netsmith::testutil
