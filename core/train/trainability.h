#pragma once

// What `train` would refuse before its first batch, found without training, so that
// `netsmith-cli validate` and the studio say it while the project is edited rather than at
// Start.
#include <cstdint>
#include <optional>
#include <string>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "project/project.h"

namespace netsmith::ops {
class OpRegistry;
}

namespace netsmith::train {

/// A classifier's output must be one score per class: a problem naming the node to change and
/// the fix ("set fc2.out_features to 10"), or nothing when the output fits `numClasses`.
/// Whether the project's train section asks for the head to be replaced (train.replace_head):
/// then the output need not fit the classes before training.
bool replacesHead(const Json& train);

std::optional<Problem> outputClassProblem(const graph::GraphAnalysis& analysis,
                                          std::int64_t numClasses);

/// The model is more than its input, and (when the project has a data section) the data
/// sources open and parse, the splits a run uses are not empty, and the output fits the
/// classes. Assumes the sections themselves are valid (project validation passed).
Problems checkTrainable(const project::Project& project, const std::string& baseDir,
                        const ops::OpRegistry& registry);

}  // namespace netsmith::train
