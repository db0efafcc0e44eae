#include "train/optimizer_factory.h"

namespace netsmith::train {

namespace {

std::unique_ptr<torch::optim::OptimizerOptions> optionsFor(const OptimizerOptions& o,
                                                           double weightDecay) {
  const auto& p = o.params;
  if (o.type == "sgd") {
    return std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(p.real("lr"))
                                                          .momentum(p.real("momentum"))
                                                          .dampening(p.real("dampening"))
                                                          .nesterov(p.flag("nesterov"))
                                                          .weight_decay(weightDecay));
  }
  if (o.type == "adam" || o.type == "adamw") {
    const auto betas = p.range("betas");
    if (o.type == "adam") {
      return std::make_unique<torch::optim::AdamOptions>(
          torch::optim::AdamOptions(p.real("lr"))
              .betas(std::make_tuple(betas[0], betas[1]))
              .eps(p.real("eps"))
              .amsgrad(p.flag("amsgrad"))
              .weight_decay(weightDecay));
    }
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(p.real("lr"))
            .betas(std::make_tuple(betas[0], betas[1]))
            .eps(p.real("eps"))
            .amsgrad(p.flag("amsgrad"))
            .weight_decay(weightDecay));
  }
  if (o.type == "rmsprop") {
    return std::make_unique<torch::optim::RMSpropOptions>(torch::optim::RMSpropOptions(p.real("lr"))
                                                              .alpha(p.real("alpha"))
                                                              .eps(p.real("eps"))
                                                              .momentum(p.real("momentum"))
                                                              .centered(p.flag("centered"))
                                                              .weight_decay(weightDecay));
  }
  if (o.type == "adagrad") {
    return std::make_unique<torch::optim::AdagradOptions>(
        torch::optim::AdagradOptions(p.real("lr"))
            .lr_decay(p.real("lr_decay"))
            .initial_accumulator_value(p.real("initial_accumulator_value"))
            .eps(p.real("eps"))
            .weight_decay(weightDecay));
  }
  throw Error("train.optimizer.type: unknown optimizer \"" + o.type + "\"");
}

std::unique_ptr<torch::optim::Optimizer> construct(
    const std::string& type, std::vector<torch::optim::OptimizerParamGroup> groups,
    std::unique_ptr<torch::optim::OptimizerOptions> defaults) {
  if (type == "sgd")
    return std::make_unique<torch::optim::SGD>(std::move(groups),
                                               static_cast<torch::optim::SGDOptions&>(*defaults));
  if (type == "adam")
    return std::make_unique<torch::optim::Adam>(std::move(groups),
                                                static_cast<torch::optim::AdamOptions&>(*defaults));
  if (type == "adamw")
    return std::make_unique<torch::optim::AdamW>(
        std::move(groups), static_cast<torch::optim::AdamWOptions&>(*defaults));
  if (type == "rmsprop")
    return std::make_unique<torch::optim::RMSprop>(
        std::move(groups), static_cast<torch::optim::RMSpropOptions&>(*defaults));
  return std::make_unique<torch::optim::Adagrad>(
      std::move(groups), static_cast<torch::optim::AdagradOptions&>(*defaults));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(
    const OptimizerOptions& options, const torch::OrderedDict<std::string, torch::Tensor>& named) {
  const double decay = options.params.real("weight_decay");
  const bool split = options.params.flag("no_decay_norm_and_bias") && decay > 0;
  std::vector<torch::Tensor> decayed, plain;
  for (const auto& item : named) {
    const auto& t = item.value();
    if (!t.requires_grad()) continue;  // frozen nodes
    (split && t.dim() <= 1 ? plain : decayed).push_back(t);
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (!decayed.empty()) groups.emplace_back(decayed, optionsFor(options, decay));
  if (!plain.empty()) groups.emplace_back(plain, optionsFor(options, 0.0));
  if (groups.empty()) throw Error("the model has no trainable parameters (every node is frozen?)");
  return construct(options.type, std::move(groups), optionsFor(options, decay));
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    group.options().set_lr(lr);
}

}  // namespace netsmith::train
