#include "import/import_job.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "checkpoint/safetensors.h"
#include "common/file_util.h"
#include "graph/graph_analysis.h"
#include "graph/model_edits.h"
#include "import/onnx_import.h"
#include "project/project.h"

namespace netsmith::import {

namespace fs = std::filesystem;

std::string projectStem(const std::string& projectPath) {
  std::string name = fs::path(projectPath).filename().string();
  for (const std::string e : {".netsmith.json", ".json"}) {
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0)
      return name.substr(0, name.size() - e.size());
  }
  return name;
}

ImportSummary runImportJob(const ImportRequest& request, const ops::OpRegistry& registry) {
  const fs::path projectPath = fs::absolute(request.project);
  const fs::path weightsPath =
      request.weights.empty()
          ? projectPath.parent_path() / (projectStem(projectPath.string()) + ".safetensors")
          : fs::absolute(request.weights);
  if (!request.overwrite) {
    for (const auto& p : {projectPath, weightsPath}) {
      if (fs::exists(p)) throw Error(p.string() + ": exists already; pass --force to replace it");
    }
  }
  ImportOptions options;
  options.input = request.input;
  options.classes = request.classes;
  auto result = importOnnx(request.model, options, registry);

  // Fine-tuning edits, before anything is written.
  ImportSummary s;
  if (request.replaceHead > 0) {
    s.head = graph::replaceHead(result.model, request.replaceHead);
    // The old head's weights no longer fit: it starts anew.
    auto& w = result.weights;
    w.erase(std::remove_if(w.begin(), w.end(),
                           [&](const auto& t) { return t.first.rfind(s.head + ".", 0) == 0; }),
            w.end());
    result.notes.push_back("head \"" + s.head + "\" replaced: " +
                           std::to_string(request.replaceHead) + " outputs, new weights");
  }
  if (!request.freezeTo.empty()) {
    s.frozen = graph::freezeUpTo(result.model, request.freezeTo);
    result.notes.push_back(std::to_string(s.frozen.size()) + " nodes frozen, up to \"" +
                           request.freezeTo + "\"");
  }
  if (!request.lrMultTo.empty()) {
    const auto set = graph::setLrMultUpTo(result.model, request.lrMultTo, request.lrMult);
    std::ostringstream m;
    m << request.lrMult;
    result.notes.push_back(std::to_string(set.size()) + " nodes train at x" + m.str() +
                           " the learning rate, up to \"" + request.lrMultTo + "\"");
  }
  const auto analysis = graph::analyseGraph(result.model, registry);
  if (!analysis.ok())
    throw Error(request.model + ": after the edits: " + formatProblems(analysis.problems));
  result.outputs = analysis.outputShape.empty() ? 0 : analysis.outputShape[0];

  const std::string relWeights =
      fs::relative(weightsPath, projectPath.parent_path()).lexically_normal().string();
  const auto project = importedProject(result, projectStem(projectPath.string()), relWeights);
  fs::create_directories(projectPath.parent_path());
  fs::create_directories(weightsPath.parent_path());
  checkpoint::writeSafetensors(weightsPath.string(), result.weights,
                               {{"source", fs::path(request.model).filename().string()},
                                {"format", "netsmith-imported-weights"}});
  writeFileAtomically(projectPath.string(), project::serialiseProject(project));

  s.projectPath = projectPath.string();
  s.weightsPath = weightsPath.string();
  s.producer = result.producer;
  s.opset = result.opset;
  s.nodes = static_cast<std::int64_t>(result.model.nodes.size());
  for (const auto& n : analysis.nodes) {
    s.params += n.paramCount;
    s.trainable += n.trainableParams;
  }
  s.outputs = result.outputs;
  s.input = result.model.input;
  s.notes = result.notes;
  return s;
}

}  // namespace netsmith::import
