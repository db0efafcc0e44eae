#pragma once

// Parameters several ops share, written once: a size taken from the input unless given (a
// convolution's in_channels, Linear's in_features, BatchNorm's num_features), a convolution's
// channels, dilation, groups and bias, and the initialisations a layer with a weight offers.
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace netsmith::ops {

/// `name`, "auto" by default: the size of the input's first dimension unless a number is given
/// (OpDef::autoValues from inputSizeFor(name) fills it in).
inline schema::ParamSpec inputSizeParam(std::string name, std::string help) {
  return schema::ParamSpec::integer(std::move(name), "auto", std::move(help))
      .atLeast(1)
      .orKeywords({"auto"});
}

/// OpDef::autoValues for inputSizeParam(name): the first input's first dimension.
inline auto inputSizeFor(std::string name) {
  return [name = std::move(name)](const std::vector<Shape>& in, const schema::Params&) {
    return Json{{name, in[0][0]}};
  };
}

/// A convolution's parameters: in_channels ("auto") and out_channels, then `geometry` (its
/// kernel, stride and padding), then dilation, groups and bias.
inline schema::ParamSchema convSchema(const schema::ParamSchema& geometry) {
  schema::ParamSchema all{
      inputSizeParam("in_channels", "input channels; \"auto\" takes them from the input"),
      schema::ParamSpec::integer("out_channels", nullptr, "number of filters (output channels)")
          .atLeast(1)
          .atMost(65536)};
  all.insert(all.end(), geometry.begin(), geometry.end());
  all.push_back(schema::ParamSpec::intPair("dilation", 1, "spacing between filter taps")
                    .atLeast(1)
                    .atMost(1024));
  all.push_back(schema::ParamSpec::integer("groups", 1,
                                           "channel groups (in and out channels must divide by it)")
                    .atLeast(1));
  all.push_back(
      schema::ParamSpec::boolean("bias", true, "learn an additive bias per output channel"));
  return all;
}

/// The initialisations a layer with a weight and a bias offers besides PyTorch's own.
inline std::vector<InitScheme> weightInitSchemes() {
  return {InitScheme::KaimingNormal, InitScheme::KaimingUniform, InitScheme::XavierUniform,
          InitScheme::XavierNormal, InitScheme::Zeros};
}

}  // namespace netsmith::ops
