// Normalisation family: BatchNorm2d.
#include "ops/cpu_kernels.h"
#include "ops/node_layer.h"
#include "ops/op_params.h"
#include "ops/op_registry.h"
#include "ops/shape_rules.h"

namespace netsmith::ops {
namespace {

using schema::Params;
using schema::ParamSpec;

Shape batchNormShape(const std::vector<Shape>& in, const Params& p) {
  requireImage(in[0], "BatchNorm2d");
  if (!p.isAuto("num_features") && p.integer("num_features") != in[0][0]) {
    throw ShapeError{"BatchNorm2d expects " + std::to_string(p.integer("num_features")) +
                         " channels but receives " + std::to_string(in[0][0]),
                     "set num_features to " + std::to_string(in[0][0]) + " or \"auto\""};
  }
  return in[0];
}

class BatchNorm2dLayerImpl : public NodeLayerImpl {
 public:
  explicit BatchNorm2dLayerImpl(const LayerSpec& spec)
      : m_eps(spec.params.real("eps")),
        m_momentum(spec.params.real("momentum")),
        m_affine(spec.params.flag("affine")) {
    const std::int64_t c = spec.inputShapes[0][0];
    if (m_affine) {
      weight = register_parameter("weight", torch::ones({c}));
      bias = register_parameter("bias", torch::zeros({c}));
    }
    running_mean = register_buffer("running_mean", torch::zeros({c}));
    running_var = register_buffer("running_var", torch::ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", torch::zeros({}, torch::kLong));
  }

  torch::Tensor forward(const std::vector<torch::Tensor>& inputs) override {
    return run(inputs.at(0), false);
  }
  bool fusesRelu() const override { return true; }
  torch::Tensor forwardThenRelu(const std::vector<torch::Tensor>& inputs) override {
    return run(inputs.at(0), true);
  }

  torch::Tensor run(const torch::Tensor& x, bool relu) {
    if (is_training()) {
      torch::NoGradGuard noGrad;
      num_batches_tracked.add_(1);
    }
    torch::Tensor y;
    if (m_sum && is_training()) {
      y = synchronised(x);
    } else if (is_training() && kernels::imageTakes(x)) {
      // Float32 on the CPU: statistics, normalisation and the ReLU in two passes each way.
      return kernels::batchNormTrain(x, weight, bias, running_mean, running_var, m_momentum, m_eps,
                                     relu);
    } else {
      y = torch::batch_norm(x, weight, bias, running_mean, running_var, is_training(), m_momentum,
                            m_eps, /*cudnn_enabled=*/true);
    }
    return relu ? torch::relu(y) : y;
  }

  bool setCrossProcessSum(CrossProcessSum sum) override {
    m_sum = std::move(sum);
    return true;
  }

  /// Training-mode BatchNorm over every process's batch: per-channel sums, sums of squares and
  /// counts are added up across processes (differentiably), then each process normalises with
  /// the global mean and variance. Running statistics take the global figures, so they stay
  /// equal on every process.
  torch::Tensor synchronised(const torch::Tensor& x) {
    const std::int64_t c = x.size(1);
    const auto xf = x.to(torch::kFloat);
    const auto count =
        torch::full({1}, double(x.numel() / std::max<std::int64_t>(1, c)), xf.options());
    const auto local = torch::cat({xf.sum({0, 2, 3}), (xf * xf).sum({0, 2, 3}), count});
    const auto global = m_sum(local);
    const auto n = global.narrow(0, 2 * c, 1);
    const auto mean = global.narrow(0, 0, c) / n;
    const auto var = (global.narrow(0, c, c) / n - mean * mean).clamp_min(0);
    {
      torch::NoGradGuard noGrad;
      const double total = n.item<double>();
      const auto unbiased = total > 1 ? var.detach() * (total / (total - 1)) : var.detach();
      running_mean.mul_(1 - m_momentum).add_(mean.detach() * m_momentum);
      running_var.mul_(1 - m_momentum).add_(unbiased * m_momentum);
    }
    auto y = (xf - mean.view({1, c, 1, 1})) * torch::rsqrt(var.view({1, c, 1, 1}) + m_eps);
    if (m_affine) y = y * weight.view({1, c, 1, 1}) + bias.view({1, c, 1, 1});
    return y.to(x.scalar_type());
  }

  void initialise(InitScheme scheme) override {
    if (!m_affine) return;
    torch::NoGradGuard noGrad;
    // Zeros sets the scale to 0: the "zero-init last BN of a residual branch" trick.
    weight.fill_(scheme == InitScheme::Zeros ? 0.0 : 1.0);
    bias.zero_();
  }

  torch::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  double m_eps, m_momentum;
  bool m_affine;
  CrossProcessSum m_sum;
};

}  // namespace

void registerNormOps(OpRegistry& registry) {
  OpDef bn;
  bn.name = "BatchNorm2d";
  bn.group = "Normalisation";
  bn.help = "batch normalisation over the channels of a CxHxW input";
  bn.schema = {
      inputSizeParam("num_features", "channels; \"auto\" takes them from the input"),
      ParamSpec::real("eps", 1e-5, "added to the variance for numerical stability")
          .above(0)
          .atMost(1),
      ParamSpec::real("momentum", 0.1, "running statistics update rate").atLeast(0).atMost(1),
      ParamSpec::boolean("affine", true, "learn a per-channel scale and shift"),
  };
  bn.initSchemes = {InitScheme::Zeros};
  bn.inferShape = batchNormShape;
  bn.autoValues = inputSizeFor("num_features");
  bn.paramCount = [](const std::vector<Shape>& in, const Params& p) -> std::int64_t {
    return p.flag("affine") ? 2 * in[0][0] : 0;
  };
  // One multiply-add per element (scale and shift folded together at inference).
  bn.macs = [](const std::vector<Shape>&, const Shape& out, const Params&) {
    return shapeNumel(out);
  };
  bn.build = [](const LayerSpec& spec) { return std::make_shared<BatchNorm2dLayerImpl>(spec); };
  bn.toOnnx = [](OnnxEmitter& onnx, const EmitNode& n) {
    const auto c = n.inputShapes[0][0];
    const bool affine = n.params.flag("affine");
    const std::string scale =
        affine ? onnx.tensor(n.id + ".weight")
               : onnx.constant(std::vector<float>(static_cast<std::size_t>(c), 1.0f), {c});
    const std::string shift =
        affine ? onnx.tensor(n.id + ".bias")
               : onnx.constant(std::vector<float>(static_cast<std::size_t>(c), 0.0f), {c});
    return onnx.node(
        "BatchNormalization",
        {n.inputs[0], scale, shift, onnx.tensor(n.id + ".running_mean"),
         onnx.tensor(n.id + ".running_var")},
        {OnnxAttr::real("epsilon", static_cast<float>(n.params.real("eps"))),
         OnnxAttr::real("momentum", static_cast<float>(1.0 - n.params.real("momentum")))});
  };
  bn.toPyTorch = [](const EmitNode& n) {
    return pyModule("nn.BatchNorm2d(" + std::to_string(n.inputShapes[0][0]) +
                        ", eps=" + pyNumber(n.params.real("eps")) +
                        ", momentum=" + pyNumber(n.params.real("momentum")) +
                        ", affine=" + pyBool(n.params.flag("affine")) + ")",
                    n);
  };
  registry.add(std::move(bn));
}

}  // namespace netsmith::ops
