#include "train/unfreeze_callback.h"

#include <algorithm>

#include "graph/model_edits.h"

namespace netsmith::train {

UnfreezeCallback::UnfreezeCallback(std::vector<UnfreezeStep> steps, const graph::ModelGraph& model,
                                   Unfreeze unfreeze, std::function<void(const std::string&)> log)
    : m_steps(std::move(steps)),
      m_model(model),
      m_unfreeze(std::move(unfreeze)),
      m_log(std::move(log)) {
  std::stable_sort(m_steps.begin(), m_steps.end(),
                   [](const UnfreezeStep& a, const UnfreezeStep& b) { return a.epoch < b.epoch; });
}

void UnfreezeCallback::onEpochStart(std::int64_t epoch) {
  while (m_done < m_steps.size() && m_steps[m_done].epoch <= epoch) {
    const auto& step = m_steps[m_done++];
    std::vector<std::string> ids;
    if (step.from.empty()) {
      for (const auto& n : m_model.nodes)
        ids.push_back(n.id);
    } else {
      ids = graph::nodeAndDependents(m_model, step.from);
    }
    const Unfrozen made = m_unfreeze(ids);
    if (m_log) {
      m_log("epoch " + std::to_string(epoch + 1) + ": unfroze " + std::to_string(made.nodes) +
            " nodes" + (step.from.empty() ? std::string() : " from \"" + step.from + "\"") + " (" +
            std::to_string(made.parameters) + " parameters now train; train.unfreeze)");
    }
  }
}

}  // namespace netsmith::train
