#include "doctor/confident_learning.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "common/error.h"

namespace netsmith::doctor {

namespace {

void checkInputs(const std::vector<std::int64_t>& labels, const ClassProbabilities& probs) {
  if (probs.classes < 2) throw Error("confident learning needs at least two classes");
  if (probs.values.size() != labels.size() * std::size_t(probs.classes))
    throw Error("confident learning: " + std::to_string(labels.size()) + " labels but " +
                std::to_string(probs.size()) + " rows of probabilities");
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= probs.classes)
      throw Error("confident learning: sample " + std::to_string(i) + " has label " +
                  std::to_string(labels[i]) + ", outside the " + std::to_string(probs.classes) +
                  " classes");
}

}  // namespace

ConfidentJoint confidentJoint(const std::vector<std::int64_t>& labels,
                              const ClassProbabilities& probs) {
  checkInputs(labels, probs);
  const auto k = std::size_t(probs.classes);
  const auto n = std::int64_t(labels.size());
  ConfidentJoint cj;
  std::vector<double> sums(k, 0.0);
  std::vector<std::int64_t> perLabel(k, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto y = std::size_t(labels[std::size_t(i)]);
    sums[y] += probs.row(i)[y];
    ++perLabel[y];
  }
  cj.thresholds.assign(k, 1.0);
  for (std::size_t j = 0; j < k; ++j)
    if (perLabel[j] > 0) cj.thresholds[j] = sums[j] / double(perLabel[j]);
  cj.counts.assign(k, std::vector<std::int64_t>(k, 0));
  for (std::int64_t i = 0; i < n; ++i) {
    const float* p = probs.row(i);
    std::int64_t best = -1;
    for (std::size_t j = 0; j < k; ++j)
      if (p[j] >= cj.thresholds[j] && (best < 0 || p[j] > p[best])) best = std::int64_t(j);
    if (best >= 0) ++cj.counts[std::size_t(labels[std::size_t(i)])][std::size_t(best)];
  }
  // Calibrate: each row to the samples labelled i, then the whole to 1.
  cj.joint.assign(k, std::vector<double>(k, 0.0));
  double total = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double row =
        double(std::accumulate(cj.counts[i].begin(), cj.counts[i].end(), std::int64_t(0)));
    for (std::size_t j = 0; j < k; ++j) {
      cj.joint[i][j] = row > 0 ? double(cj.counts[i][j]) / row * double(perLabel[i]) : 0.0;
      total += cj.joint[i][j];
    }
  }
  if (total > 0)
    for (auto& row : cj.joint)
      for (double& q : row)
        q /= total;
  return cj;
}

std::vector<LabelVerdict> rankLabelIssues(const std::vector<std::int64_t>& labels,
                                          const ClassProbabilities& probs) {
  const ConfidentJoint cj = confidentJoint(labels, probs);
  const auto k = std::size_t(probs.classes);
  const auto n = std::int64_t(labels.size());
  std::vector<LabelVerdict> verdicts(static_cast<std::size_t>(n));
  std::vector<std::vector<std::int64_t>> byLabel(k);
  for (std::int64_t i = 0; i < n; ++i) {
    const float* p = probs.row(i);
    auto& v = verdicts[std::size_t(i)];
    v.sample = i;
    v.given = labels[std::size_t(i)];
    v.selfConfidence = p[v.given];
    v.suggested = std::int64_t(std::max_element(p, p + k) - p);
    byLabel[std::size_t(v.given)].push_back(i);
  }
  // Prune by noise rate: for each off-diagonal (i, j), the round(n Q[i][j]) samples labelled i
  // with the largest margin p_j - p_i. cleanlab leaves at least one sample of each label.
  for (std::size_t i = 0; i < k; ++i) {
    auto& members = byLabel[i];
    std::int64_t pruned = 0;
    for (std::size_t j = 0; j < k; ++j) {
      if (j == i) continue;
      auto count = std::int64_t(std::llround(double(n) * cj.joint[i][j]));
      count = std::min<std::int64_t>(count, std::int64_t(members.size()) - 1 - pruned);
      if (count <= 0) continue;
      std::vector<std::int64_t> order = members;
      auto margin = [&](std::int64_t s) { return double(probs.row(s)[j]) - probs.row(s)[i]; };
      std::partial_sort(order.begin(), order.begin() + count, order.end(),
                        [&](std::int64_t a, std::int64_t b) {
                          const double ma = margin(a), mb = margin(b);
                          return ma != mb ? ma > mb : a < b;
                        });
      for (std::int64_t r = 0; r < count; ++r) {
        auto& v = verdicts[std::size_t(order[std::size_t(r)])];
        if (!v.flagged) ++pruned;
        v.flagged = true;
      }
    }
  }
  for (auto& v : verdicts) {
    const float* p = probs.row(v.sample);
    if (v.suggested == v.given) {
      // The most probable other class, what a relabel would pick.
      std::int64_t best = -1;
      for (std::size_t j = 0; j < k; ++j)
        if (std::int64_t(j) != v.given && (best < 0 || p[j] > p[best])) best = std::int64_t(j);
      if (v.flagged) v.suggested = best;
    }
    v.suggestedProbability = p[v.suggested];
  }
  std::stable_sort(verdicts.begin(), verdicts.end(),
                   [](const LabelVerdict& a, const LabelVerdict& b) {
                     if (a.flagged != b.flagged) return a.flagged;
                     return a.selfConfidence < b.selfConfidence;
                   });
  return verdicts;
}

}  // namespace netsmith::doctor
