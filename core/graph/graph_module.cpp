#include "graph/graph_module.h"

#include <algorithm>
#include <map>

#include "ops/node_layer.h"

namespace netsmith::graph {

GraphModuleImpl::GraphModuleImpl(const ModelGraph& graph, const ops::OpRegistry& registry)
    : m_analysis(analyseGraph(graph, registry)), m_input(graph.input) {
  if (!m_analysis.ok()) {
    throw Error("the model is not valid:\n" + formatProblems(m_analysis.problems));
  }
  std::map<std::string, std::size_t> slot;
  std::map<std::size_t, std::size_t> lastUse;  // value slot -> step index
  for (const auto& info : m_analysis.nodes) {
    const Node* node = graph.find(info.id);
    // The analysis leaves a node without an op to the project reader's problems; a graph
    // built without reading them (a caller's slip) is refused here, never dereferenced.
    if (!info.def || !info.valid) throw Error("node \"" + info.id + "\": no valid op to build");
    Step step;
    step.id = info.id;
    for (const auto& in : node->inputs)
      step.inputSlots.push_back(slot.at(in));
    ops::LayerSpec spec{info.id, info.params, info.inputShapes, info.outputShape};
    step.layer = info.def->build(spec);
    register_module(info.id, step.layer);
    if (!node->init.empty()) step.layer->initialise(*ops::parseInitScheme(node->init));
    if (node->frozen) {
      for (auto& p : step.layer->parameters())
        p.set_requires_grad(false);
      if (node->op == "BatchNorm2d") m_frozenBatchNorm.push_back(node->id);
    }
    for (auto s : step.inputSlots)
      lastUse[s] = m_steps.size();
    slot[info.id] = m_steps.size();
    m_steps.push_back(std::move(step));
  }
  m_outputSlot = slot.at(m_analysis.outputId);
  for (const auto& [value, stepIndex] : lastUse) {
    if (value != m_outputSlot) m_steps[stepIndex].release.push_back(value);
  }
  foldRelus(graph);
}

/// A ReLU whose input is a node that fuses ReLUs (BatchNorm2d) and is that node's only consumer
/// runs inside that node's step: one pass over the values instead of two, the same results.
void GraphModuleImpl::foldRelus(const ModelGraph& graph) {
  std::map<std::string, int> consumers;
  for (const auto& step : m_steps)
    for (const auto& in : graph.find(step.id)->inputs)
      ++consumers[in];
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < m_steps.size(); ++i)
    index[m_steps[i].id] = i;
  for (auto& step : m_steps) {
    const Node* node = graph.find(step.id);
    if (node->op != "ReLU" || node->inputs.size() != 1) continue;
    Step& before = m_steps[index.at(node->inputs[0])];
    if (consumers[before.id] != 1 || !before.layer->fusesRelu() || before.thenRelu) continue;
    before.thenRelu = true;
    step.passThrough = true;
  }
}

int GraphModuleImpl::keepFrozenBatchNormInEval(bool keep) {
  m_frozenBatchNormEval = keep;
  train(is_training());
  return keep ? static_cast<int>(m_frozenBatchNorm.size()) : 0;
}

std::vector<std::pair<std::string, torch::Tensor>> GraphModuleImpl::unfreeze(
    const std::vector<std::string>& ids) {
  std::vector<std::pair<std::string, torch::Tensor>> made;
  for (const auto& id : ids) {
    auto l = layer(id);
    if (!l) continue;
    for (auto& p : l->parameters()) {
      if (p.requires_grad()) continue;
      p.set_requires_grad(true);
      made.emplace_back(id, p);
    }
    m_frozenBatchNorm.erase(std::remove(m_frozenBatchNorm.begin(), m_frozenBatchNorm.end(), id),
                            m_frozenBatchNorm.end());
  }
  torch::nn::Module::train(is_training());  // the unfrozen BatchNorm layers follow again
  train(is_training());
  return made;
}

void GraphModuleImpl::train(bool on) {
  torch::nn::Module::train(on);
  if (!on || !m_frozenBatchNormEval) return;
  for (const auto& id : m_frozenBatchNorm)
    if (auto l = layer(id)) l->eval();
}

torch::Tensor GraphModuleImpl::forward(torch::Tensor x) {
  return run(std::move(x), m_steps.size(), nullptr);
}

torch::Tensor featureRows(const torch::Tensor& tapped) {
  auto f = tapped.to(torch::kFloat);
  if (f.dim() == 4) f = f.mean({2, 3});
  return f.reshape({f.size(0), -1}).contiguous();
}

torch::Tensor GraphModuleImpl::forwardTapping(torch::Tensor x, const std::string& tapId,
                                              torch::Tensor& tapped) {
  for (std::size_t i = 0; i < m_steps.size(); ++i)
    if (m_steps[i].id == tapId) return run(std::move(x), i, &tapped);
  throw Error("no node \"" + tapId + "\" in the model");
}

torch::Tensor GraphModuleImpl::run(torch::Tensor x, std::size_t tap, torch::Tensor* tapped) {
  if (x.dim() != 4 || x.size(1) != m_input.channels || x.size(2) != m_input.height ||
      x.size(3) != m_input.width) {
    std::string got;
    for (auto d : x.sizes())
      got += (got.empty() ? "" : "x") + std::to_string(d);
    throw Error("model input: expects N x " + formatShape(m_input.shape()) + ", receives " + got);
  }
  std::vector<torch::Tensor> values(m_steps.size());
  std::vector<torch::Tensor> args;
  // Tapping a node whose ReLU is folded in needs its own output: that run keeps them apart.
  const bool fold = !tapped || !m_steps[tap].thenRelu;
  for (std::size_t i = 0; i < m_steps.size(); ++i) {
    Step& step = m_steps[i];
    args.clear();
    if (step.inputSlots.empty()) {
      args.push_back(x);
    } else {
      for (auto s : step.inputSlots)
        args.push_back(values[s]);
    }
    if (fold && step.passThrough) {
      values[i] = args.at(0);
    } else if (fold && step.thenRelu) {
      values[i] = step.layer->forwardThenRelu(args);
    } else {
      values[i] = step.layer->forward(args);
    }
    if (i == tap) {
      // Below a frozen part the activation has no graph: Grad-CAM needs gradients with respect
      // to the activation itself, not to weights, so the tap starts one.
      if (torch::GradMode::is_enabled() && !values[i].requires_grad())
        values[i] = values[i].detach().requires_grad_(true).clone();
      *tapped = values[i];
    }
    for (auto s : step.release)
      values[s] = torch::Tensor();
  }
  return values[m_outputSlot];
}

int GraphModuleImpl::setCrossProcessSum(
    const std::function<torch::Tensor(const torch::Tensor&)>& sum) {
  int users = 0;
  for (auto& step : m_steps) {
    if (!step.layer) continue;
    if (step.layer->setCrossProcessSum(sum)) ++users;
  }
  return users;
}

std::shared_ptr<ops::NodeLayerImpl> GraphModuleImpl::layer(const std::string& id) const {
  for (const auto& s : m_steps) {
    if (s.id == id) return s.layer;
  }
  return nullptr;
}

}  // namespace netsmith::graph
