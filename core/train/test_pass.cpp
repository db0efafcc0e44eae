#include "train/test_pass.h"

namespace netsmith::train {

std::string TestPass::onEpochEnd(const run::EpochMetrics&) {
  if (!m_best->improved()) return {};
  m_bestWeights.clear();
  for (const auto& [name, t] : checkpoint::moduleState(*m_setup.net))
    m_bestWeights.emplace_back(name, t.clone());
  m_bestTaskState = m_setup.task->state();
  return {};
}

TestPass::Outcome TestPass::run(EvalLoop& loop,
                                const std::function<void(const std::string&)>& log) {
  auto& s = m_setup;
  Outcome o;
  o.weights = "last";
  if (!m_bestWeights.empty()) {
    torch::NoGradGuard noGrad;
    checkpoint::loadModuleState(*s.net, m_bestWeights);
    s.task->adoptState(m_bestTaskState);  // what the best epoch's validation tuned
    o.weights = "best";
  }
  log("evaluating the test split (" + std::to_string(s.pd->data.test.size()) +
      " images) with the " + o.weights + " weights");
  o.metrics = loop.run(*s.testLoader);
  return o;
}

}  // namespace netsmith::train
