#include "train/task_setup.h"

namespace netsmith::train {

task::TaskSetup taskSetupFor(const TrainOptions& options, const graph::GraphAnalysis& analysis,
                             const TaskFacts& facts) {
  task::TaskSetup setup;
  setup.classes = facts.classes;
  setup.dataClasses = facts.dataClasses;
  setup.targets = facts.targets;
  setup.outputShape = analysis.outputShape;
  setup.inputShape = analysis.inputShape;
  setup.labelSmoothing = options.labelSmoothing;
  setup.loss = options.loss;
  setup.classWeights = options.classWeights;
  setup.classWeightValues = options.classWeightValues;
  return setup;
}

}  // namespace netsmith::train
