// Normalise family: Normalize ((x - mean) / std per channel).
#include <opencv2/core.hpp>

#include "augment/transform.h"

namespace netsmith::augment {

namespace {

using schema::ParamSpec;

std::vector<double> resolved(const schema::Params& p, const char* name,
                             const std::vector<double>& fromData) {
  return p.isAuto(name) ? fromData : p.list(name);
}

}  // namespace

void registerNormalizeTransform(TransformRegistry& registry) {
  TransformDef def;
  def.name = "Normalize";
  def.group = "Normalise";
  def.help = "subtracts the mean and divides by the standard deviation, per channel";
  def.schema = {
      ParamSpec::floatList("mean", "auto", "per-channel mean; \"auto\" uses the data settings")
          .orKeywords({"auto"}),
      ParamSpec::floatList("std", "auto",
                           "per-channel standard deviation; \"auto\" uses the data settings")
          .above(0)
          .orKeywords({"auto"}),
  };
  def.deterministic = true;
  def.check = [](const schema::Params& p, const TransformContext& ctx) {
    std::vector<TransformIssue> issues;
    for (const char* name : {"mean", "std"}) {
      if (p.isAuto(name)) continue;
      const auto values = p.list(name);
      if (values.size() != 1 && values.size() != static_cast<std::size_t>(ctx.channels)) {
        issues.push_back({name, "has " + std::to_string(values.size()) +
                                    " values but the model input has " +
                                    std::to_string(ctx.channels) + " channel(s)"});
      }
    }
    return issues;
  };
  def.build = [](const schema::Params& p,
                 const TransformContext& ctx) -> std::unique_ptr<Transform> {
    auto mean = resolved(p, "mean", ctx.mean);
    auto stddev = resolved(p, "std", ctx.std);
    const auto c = static_cast<std::size_t>(ctx.channels);
    if (mean.size() == 1) mean.assign(c, mean[0]);
    if (stddev.size() == 1) stddev.assign(c, stddev[0]);
    if (mean.size() < c) mean.resize(c, 0.0);
    if (stddev.size() < c) stddev.resize(c, 1.0);
    return std::make_unique<FunctionTransform>([mean, stddev](cv::Mat& img, SampleRng&) {
      const int ch = img.channels();
      cv::Scalar m, s;
      for (int i = 0; i < ch && i < 4; ++i) {
        m[i] = mean[static_cast<std::size_t>(i)];
        s[i] = 1.0 / stddev[static_cast<std::size_t>(i)];
      }
      cv::subtract(img, m, img);
      cv::multiply(img, s, img);
    });
  };
  registry.add(std::move(def));
}

}  // namespace netsmith::augment
