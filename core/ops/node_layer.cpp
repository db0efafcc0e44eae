#include "ops/node_layer.h"

#include <cmath>

namespace netsmith::ops {

std::shared_ptr<NodeLayerImpl> unaryLayer(
    std::function<torch::Tensor(const torch::Tensor&, bool training)> fn) {
  return std::make_shared<FunctionLayerImpl>(
      [fn = std::move(fn)](const std::vector<torch::Tensor>& in, bool training) {
        return fn(in.at(0), training);
      });
}

void initialiseWeightAndBias(torch::Tensor& weight, torch::Tensor& bias, InitScheme scheme) {
  torch::NoGradGuard noGrad;
  namespace init = torch::nn::init;
  switch (scheme) {
    case InitScheme::Default: {
      init::kaiming_uniform_(weight, std::sqrt(5.0));
      if (bias.defined()) {
        const auto fans = init::_calculate_fan_in_and_fan_out(weight);
        const double fanIn = static_cast<double>(std::get<0>(fans));
        const double bound = fanIn > 0 ? 1.0 / std::sqrt(fanIn) : 0.0;
        init::uniform_(bias, -bound, bound);
      }
      return;
    }
    case InitScheme::KaimingNormal:
      init::kaiming_normal_(weight, 0.0, torch::kFanOut, torch::kReLU);
      break;
    case InitScheme::KaimingUniform:
      init::kaiming_uniform_(weight, 0.0, torch::kFanIn, torch::kReLU);
      break;
    case InitScheme::XavierUniform:
      init::xavier_uniform_(weight);
      break;
    case InitScheme::XavierNormal:
      init::xavier_normal_(weight);
      break;
    case InitScheme::Zeros:
      init::zeros_(weight);
      break;
  }
  if (bias.defined()) init::zeros_(bias);
}

}  // namespace netsmith::ops
