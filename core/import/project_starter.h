#pragma once

// Projects to start from: a blank one (its Input only) and one made from an image folder (a
// small CNN sized to the folder's images and classes). File > New and File > New from data in
// the studio. A workflow above `project` and `data` (it reads a data folder to write a project),
// beside the ONNX import's.
#include <string>

#include "common/json.h"
#include "graph/model_graph.h"
#include "project/project.h"

namespace netsmith::import {

/// A project whose model is its Input only, with the given data and train sections (the
/// studio passes the default project's).
project::Project blankProject(const std::string& name, const graph::InputSpec& input,
                              const Json& data, const Json& train);

/// The starter for a folder with one sub-folder of images per class: the input from its first
/// readable image (grey or RGB; its size, at most 64 pixels a side, in proportion), three
/// Conv-BN-ReLU stages of 32, 64 and 128 filters with max pooling between them, global average
/// pooling and a Linear with one unit per class; 10% of the images for validation; Adam with a
/// cosine schedule for 10 epochs. Throws netsmith::Error naming the folder when it has no class
/// folders or no readable image.
project::Project projectFromImageFolder(const std::string& folder, const std::string& name);

}  // namespace netsmith::import
