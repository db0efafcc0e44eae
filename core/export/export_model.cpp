#include "export/export_model.h"

#include <sstream>

namespace netsmith::exporting {

std::vector<std::pair<std::string, std::string>> ExportModel::metadata() const {
  const auto& in = project.model.input;
  std::vector<std::pair<std::string, std::string>> m{
      {"netsmith_project", project.name},
      {"classes", Json(classes).dump()},
      {"input_size", std::to_string(in.channels) + "x" + std::to_string(in.height) + "x" +
                         std::to_string(in.width)},
      {"channel_order", in.channels == 1 ? "grey" : "RGB"},
      {"pixel_scale", "1/255 (0..1 before normalisation)"}};
  if (taskState.is_object() && !taskState.empty()) m.emplace_back("task_state", taskState.dump());
  if (temperature != 1) {
    std::ostringstream t;
    t.precision(17);
    t << temperature;
    m.emplace_back("temperature", t.str() + " (the output is the model's divided by it)");
  }
  if (!mean.empty()) {
    m.emplace_back("normalization_mean", Json(mean).dump());
    m.emplace_back("normalization_std", Json(std).dump());
  }
  m.emplace_back("fit", fit == data::FitPolicy::ResizeCrop ? "resize_crop" : "resize");
  // The project as trained, so the file can be used with the same task code and preprocessing
  // as its checkpoint (export/onnx_model.h: predict and eval on the file).
  m.emplace_back("netsmith_snapshot", project::serialiseProject(project));
  return m;
}

ExportModel exportModelFrom(const project::Project& project, graph::GraphModule net,
                            std::shared_ptr<const ops::OpRegistry> registry) {
  return ExportModel{checkpoint::loadedModelFrom(project, std::move(net), std::move(registry))};
}

ExportModel loadExportModel(const std::string& checkpointPath, const RegistriesPtr& registries) {
  return ExportModel{checkpoint::loadModel(checkpointPath, registries)};
}

}  // namespace netsmith::exporting
