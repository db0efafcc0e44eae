#include "train/loop_state.h"

namespace netsmith::train {

void LoopState::nextEpoch() {
  epoch += 1;
  nextBatch = 0;
  lossSum = 0;
  figureSums.clear();
  seen = 0;
  epochSeconds = 0;
  normSums.clear();
  normSteps = 0;
}

Json LoopState::toJson() const {
  return Json{{"epoch", epoch},
              {"next_batch", nextBatch},
              {"step", step},
              {"epoch_loss_sum", lossSum},
              {"epoch_figure_sums", figureSums},
              {"epoch_seen", seen},
              {"epoch_seconds", epochSeconds},
              {"epoch_grad_norm_sums", normSums},
              {"epoch_grad_norm_steps", normSteps},
              {"loss_scaler", Json{{"scale", lossScale}, {"growth_tracker", scaleGrowth}}},
              {"skipped_steps", skippedSteps}};
}

void LoopState::fromJson(const Json& j) {
  epoch = j.at("epoch").get<std::int64_t>();
  nextBatch = j.at("next_batch").get<std::int64_t>();
  step = j.at("step").get<std::int64_t>();
  lossSum = j.at("epoch_loss_sum").get<double>();
  // Checkpoints from before the Task seam kept classification's one sum as "epoch_correct".
  if (j.contains("epoch_figure_sums"))
    figureSums = j.at("epoch_figure_sums").get<std::vector<double>>();
  else
    figureSums = {double(j.at("epoch_correct").get<std::int64_t>())};
  seen = j.at("epoch_seen").get<std::int64_t>();
  epochSeconds = j.at("epoch_seconds").get<double>();
  normSums = j.at("epoch_grad_norm_sums").get<std::map<std::string, double>>();
  normSteps = j.at("epoch_grad_norm_steps").get<std::int64_t>();
  lossScale = j.at("loss_scaler").at("scale").get<double>();
  scaleGrowth = j.at("loss_scaler").at("growth_tracker").get<std::int64_t>();
  skippedSteps = j.value("skipped_steps", std::int64_t(0));
}

}  // namespace netsmith::train
