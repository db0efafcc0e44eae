#include "import/project_starter.h"

#include <algorithm>
#include <cmath>

#include "data/data_config.h"
#include "data/dataset_source.h"

namespace netsmith::import {

namespace {

constexpr double kStarterRow = 80;  // the editor's row gap
constexpr int kStarterMaxSide = 64;

graph::Node starterNode(const std::string& id, const std::string& op, Json params,
                        const std::string& input, int row) {
  graph::Node n;
  n.id = id;
  n.op = op;
  n.params = std::move(params);
  if (!input.empty()) n.inputs = {input};
  n.x = 0;
  n.y = kStarterRow * row;
  return n;
}

}  // namespace

project::Project blankProject(const std::string& name, const graph::InputSpec& input,
                              const Json& data, const Json& train) {
  project::Project p;
  p.name = name;
  p.model.input = input;
  p.model.nodes = {starterNode("input", "Input", Json::object(), "", 0)};
  p.data = data;
  p.train = train;
  return p;
}

project::Project projectFromImageFolder(const std::string& folder, const std::string& name) {
  data::SourceSpec spec;
  spec.format = data::SourceFormat::ImageFolder;
  spec.path = "data.train";
  spec.root = folder;
  const auto source = data::openSource(spec, {}, data::ErrorPolicy::Skip);
  if (source->numClasses() < 2)
    throw Error(folder + ": needs a sub-folder of images for each of at least 2 classes (found " +
                std::to_string(source->numClasses()) + ")");
  cv::Mat first;
  for (std::int64_t i = 0; i < source->size() && first.empty(); ++i) {
    try {
      first = source->load(i);
    } catch (const Error&) {
    }
  }
  if (first.empty()) throw Error(folder + ": no readable image in its class folders");
  graph::InputSpec input;
  input.channels = first.channels() == 1 ? 1 : 3;
  const double scale =
      std::min(1.0, double(kStarterMaxSide) / double(std::max(first.rows, first.cols)));
  input.height = std::max(8, int(std::lround(first.rows * scale)));
  input.width = std::max(8, int(std::lround(first.cols * scale)));

  project::Project p;
  p.name = name;
  p.description = "A small CNN for the images in " + folder;
  p.model.input = input;
  auto& nodes = p.model.nodes;
  nodes.push_back(starterNode("input", "Input", Json::object(), "", 0));
  std::string last = "input";
  int row = 1;
  const int widths[] = {32, 64, 128};
  for (int stage = 0; stage < 3; ++stage) {
    const std::string k = std::to_string(stage + 1);
    if (stage > 0) {
      nodes.push_back(starterNode("pool" + std::to_string(stage), "MaxPool2d",
                                  Json{{"kernel_size", 2}}, last, row++));
      last = nodes.back().id;
    }
    nodes.push_back(starterNode(
        "conv" + k, "Conv2d",
        Json{{"out_channels", widths[stage]}, {"kernel_size", 3}, {"padding", 1}, {"bias", false}},
        last, row++));
    nodes.push_back(starterNode("bn" + k, "BatchNorm2d", Json::object(), nodes.back().id, row++));
    nodes.push_back(starterNode("relu" + k, "ReLU", Json::object(), nodes.back().id, row++));
    last = nodes.back().id;
  }
  nodes.push_back(starterNode("gap", "GlobalAvgPool", Json::object(), last, row++));
  nodes.push_back(starterNode("flatten", "Flatten", Json::object(), "gap", row++));
  nodes.push_back(
      starterNode("fc", "Linear", Json{{"out_features", source->numClasses()}}, "flatten", row++));
  p.data = Json{{"train", Json{{"format", "image_folder"}, {"root", folder}}},
                {"validation", Json{{"fraction", 0.1}, {"seed", 0}, {"stratified", true}}},
                {"classes", source->classNames()},
                {"fit", "resize"},
                {"on_error", "skip"}};
  p.train = Json{{"epochs", 10},
                 {"batch_size", 64},
                 {"optimizer", Json{{"type", "adam"}, {"lr", 0.001}}},
                 {"schedule", Json{{"type", "cosine"}}},
                 {"seed", 0}};
  return p;
}

}  // namespace netsmith::import
