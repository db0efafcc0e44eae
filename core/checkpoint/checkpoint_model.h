#pragma once

// The model a checkpoint holds, built from its project snapshot and loaded with its weights:
// what `eval`, `export` and the studio's Evaluation page run.
#include <string>

#include "checkpoint/checkpoint.h"
#include "graph/graph_module.h"
#include "project/project.h"

namespace netsmith::checkpoint {

/// Builds `project`'s model and loads `data`'s weights into it. The snapshot's model is
/// analysed first, and refused before anything is allocated when it is not valid or needs
/// more parameters than the file holds (a hostile snapshot cannot ask for terabytes). Throws
/// netsmith::Error naming `path`.
graph::GraphModule modelFromCheckpoint(const project::Project& project, const CheckpointData& data,
                                       const std::string& path, const ops::OpRegistry& registry);

}  // namespace netsmith::checkpoint
