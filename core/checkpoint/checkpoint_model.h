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

/// The project snapshot a checkpoint carries, parsed; a snapshot that is missing or does not
/// read whole (a key missing, a value of the wrong kind) is refused with its problems, so what
/// is built from it was checked as a project file is. Throws netsmith::Error naming `path`.
project::LoadedProject checkpointProject(const CheckpointData& data, const std::string& path);

/// The weights in `path`: a Netsmith checkpoint's model, or a plain safetensors file of weights
/// (an export, an import's weights). Throws netsmith::Error naming the file.
NamedTensors readWeights(const std::string& path);

/// True when `path` holds a project file (JSON) rather than a checkpoint: `eval`, `export` and
/// Grad-CAM take either.
bool isProjectFile(const std::string& path);

/// A project whose weights come from its init_from (an imported model, not trained yet).
struct ProjectWithWeights {
  project::LoadedProject loaded;
  std::string weightsPath;  ///< init_from, resolved against the project's folder
  graph::GraphModule net{nullptr};
};

/// Loads the project at `path` and builds its model with the weights of its init_from, every
/// weight matched (as from a checkpoint). Throws netsmith::Error naming the project when it is
/// not valid, has no init_from, or the weights do not fit.
ProjectWithWeights modelFromProjectWeights(const std::string& path,
                                           const ops::OpRegistry& registry);

}  // namespace netsmith::checkpoint
