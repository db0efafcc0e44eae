#include "train/optimizer_factory.h"

#include <algorithm>

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
    const OptimizerOptions& options, const torch::OrderedDict<std::string, torch::Tensor>& named,
    const std::map<std::string, double>& lrMult, std::vector<double>* groupScales,
    bool includeFrozen) {
  const double decay = options.params.real("weight_decay");
  const bool split = options.params.flag("no_decay_norm_and_bias") && decay > 0;
  // (multiplier, decayed?) -> tensors, in a fixed order: multiplier 1 first, as before.
  std::map<std::pair<double, bool>, std::vector<torch::Tensor>> byGroup;
  std::vector<std::pair<double, bool>> order;
  for (const auto& item : named) {
    const auto& t = item.value();
    if (!t.requires_grad() && !includeFrozen) continue;  // frozen nodes
    const auto node = item.key().substr(0, item.key().find('.'));
    const auto m = lrMult.find(node);
    const double mult = m == lrMult.end() ? 1.0 : m->second;
    const std::pair<double, bool> key{mult, !(split && t.dim() <= 1)};
    auto& list = byGroup[key];
    if (list.empty()) order.push_back(key);
    list.push_back(t);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if ((a.first == 1.0) != (b.first == 1.0)) return a.first == 1.0;
    if (a.first != b.first) return a.first < b.first;
    return a.second && !b.second;  // decayed before plain
  });
  std::vector<torch::optim::OptimizerParamGroup> groups;
  std::vector<double> scales;
  for (const auto& key : order) {
    groups.emplace_back(byGroup[key], optionsFor(options, key.second ? decay : 0.0));
    scales.push_back(key.first);
  }
  if (groups.empty()) throw Error("the model has no trainable parameters (every node is frozen?)");
  if (groupScales) *groupScales = scales;
  auto optimizer = construct(options.type, std::move(groups), optionsFor(options, decay));
  std::size_t k = 0;
  for (auto& group : optimizer->param_groups()) {  // the first step's rate, before any schedule
    group.options().set_lr(group.options().get_lr() * scales[k]);
    ++k;
  }
  return optimizer;
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr,
                     const std::vector<double>& scales) {
  std::size_t k = 0;
  for (auto& group : optimizer.param_groups()) {
    const double scale = k < scales.size() ? scales[k] : 1.0;
    group.options().set_lr(lr * scale);
    ++k;
  }
}

std::map<std::string, double> lrMultipliers(const graph::ModelGraph& model) {
  std::map<std::string, double> m;
  for (const auto& n : model.nodes)
    if (n.lrMult != 1.0) m[n.id] = n.lrMult;
  return m;
}

}  // namespace netsmith::train
