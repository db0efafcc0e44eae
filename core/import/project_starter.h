#pragma once

// Projects to start from: a blank one (its Input only), and one made from a user's data: the
// data recognised (data/data_detect.h), scanned once (counts, unreadable files, image sizes,
// channels, mean and std), and a proposal made from it: the task its targets call for, that
// task's starter template (task::StarterRule) with its input sized to the images and its last
// layer to the classes or targets, a validation split and the normalisation. `netsmith-cli init`
// prints and writes the proposal; the studio's New from data shows it in a form first. A
// workflow above `project`, `data` and `task` (it reads data to write a project), beside the
// ONNX import's.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "data/data_detect.h"
#include "data/data_scan.h"
#include "graph/model_graph.h"
#include "project/project.h"
#include "registries/registries_fwd.h"

namespace netsmith::ops {
class OpRegistry;
}
namespace netsmith::task {
class TaskRegistry;
}

namespace netsmith::import {

/// A project whose model is its Input only, with the given data and train sections (the
/// studio passes the default project's).
project::Project blankProject(const std::string& name, const graph::InputSpec& input,
                              const Json& data, const Json& train);

/// What a person may choose before the proposal is made; empty or 0: the proposal decides.
struct StarterChoices {
  std::string task;          ///< a task's name; "": the task the data's targets call for
  std::string templateName;  ///< a template's name; "": the task's starter template
  std::string name;          ///< the project's name; "": the data folder's name
  std::int64_t channels = 0, height = 0, width = 0;  ///< the model's input
  double validationFraction = -1;                    ///< < 0: 0.1, or 0.2 under 2,000 images
  bool explicitNormalization = false;  ///< write the scanned mean and std into the project
};

/// Where the program and its caller come in: the registries and the templates folder.
struct StarterContext {
  RegistriesPtr registries;
  std::string templatesDir;
  /// Progress of the scan: (what is being done, done, total); false to cancel (then Error).
  std::function<bool(const std::string&, std::int64_t, std::int64_t)> progress;
};

struct DataProposal {
  data::DetectedData found;
  data::DataScanResult scan;  ///< counts, unreadable files, sizes, mean and std (training split)
  int imageChannels = 0;      ///< the images' own: 1 when every image read is grey, else 3
  std::string task;
  std::string templateName;
  graph::InputSpec input;
  std::int64_t outputs = 0;    ///< the last layer's width the task asked for
  std::int64_t batchSize = 0;  ///< the project's train.batch_size (0: the template names none)
  /// One line per decision and why ("input: 3 x 48 x 48, the most common image size").
  std::vector<std::string> choices;
  project::Project project;  ///< paths relative to the project file's folder
  Problems problems;         ///< what validation still finds in the project (empty: none)
};

/// Recognises the data at `dataPath`, scans it and proposes a project to be saved as
/// `projectPath` (relative data paths are made from its folder). Throws netsmith::Error naming
/// the data, task or template that cannot be used.
DataProposal proposeProject(const std::string& dataPath, const std::string& projectPath,
                            const StarterChoices& choices, const StarterContext& context);

/// The proposal as a person reads it: what was found, then what was chosen.
std::string proposalText(const DataProposal& proposal);

/// The templates of `templatesDir` whose task is `task` (every one for ""), by name.
std::vector<std::string> templatesFor(const std::string& templatesDir, const std::string& task);

/// Where a project made from `dataPath` is written by default: beside the data, named after
/// it (data/pets -> data/pets.netsmith.json; data/train.csv -> data/<folder>.netsmith.json).
std::string defaultProjectPath(const std::string& dataPath);

}  // namespace netsmith::import
