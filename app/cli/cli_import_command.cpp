// import: an ONNX classifier -> a Netsmith project and its weights (core/import).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>

#include "checkpoint/safetensors.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "common/file_util.h"
#include "graph/graph_analysis.h"
#include "graph/model_edits.h"
#include "import/onnx_import.h"

namespace netsmith::cli {

namespace {

namespace fs = std::filesystem;

graph::InputSpec parseInputFlag(const std::string& text) {
  static const std::regex shape(R"((\d{1,5})x(\d{1,5})x(\d{1,5}))");
  std::smatch m;
  if (!std::regex_match(text, m, shape))
    throw UsageError{"--input expects CxHxW, e.g. 3x224x224, got \"" + text + "\""};
  graph::InputSpec in{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
  if (in.channels < 1 || in.height < 1 || in.width < 1)
    throw UsageError{"--input: every dimension must be at least 1, got \"" + text + "\""};
  return in;
}

/// "resnet18.netsmith.json" -> "resnet18".
std::string projectStem(const fs::path& project) {
  std::string name = project.filename().string();
  for (const char* ext : {".netsmith.json", ".json"}) {
    const std::string e = ext;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0)
      return name.substr(0, name.size() - e.size());
  }
  return name;
}

}  // namespace

int runImport(const std::vector<std::string>& words) {
  const Args args(words, {"--json", "--force"},
                  {"--out", "--weights", "--input", "--classes", "--replace-head", "--freeze-to"});
  const std::string model = args.one("MODEL.onnx");
  const std::string out = args.option("--out");
  if (out.empty()) throw UsageError{"--out PROJECT.netsmith.json is required"};
  import::ImportOptions options;
  if (!args.option("--input").empty()) options.input = parseInputFlag(args.option("--input"));
  options.classes = args.integer("--classes", 0, 0, 1000000);
  const fs::path projectPath = fs::absolute(out);
  const fs::path weightsPath =
      args.option("--weights").empty()
          ? projectPath.parent_path() / (projectStem(projectPath) + ".safetensors")
          : fs::absolute(args.option("--weights"));
  if (!args.has("--force")) {
    for (const auto& p : {projectPath, weightsPath}) {
      if (fs::exists(p)) throw Error(p.string() + ": exists already; pass --force to replace it");
    }
  }
  const auto& registry = ops::OpRegistry::withBuiltins();
  // Everything is checked before anything is written.
  auto result = import::importOnnx(model, options, registry);
  // Fine-tuning edits, before anything is written.
  std::string head;
  std::vector<std::string> frozen;
  if (const auto classes = args.integer("--replace-head", 0, 0, 1000000); classes > 0) {
    head = graph::replaceHead(result.model, classes);
    // The old head's weights no longer fit: it starts anew.
    auto& w = result.weights;
    w.erase(std::remove_if(w.begin(), w.end(),
                           [&](const auto& t) { return t.first.rfind(head + ".", 0) == 0; }),
            w.end());
    result.notes.push_back("head \"" + head + "\" replaced: " + std::to_string(classes) +
                           " outputs, new weights");
  }
  if (!args.option("--freeze-to").empty()) {
    frozen = graph::freezeUpTo(result.model, args.option("--freeze-to"));
    result.notes.push_back(std::to_string(frozen.size()) + " nodes frozen, up to \"" +
                           args.option("--freeze-to") + "\"");
  }
  const auto analysis = graph::analyseGraph(result.model, registry);
  if (!analysis.ok())
    throw Error(model + ": after the edits: " + formatProblems(analysis.problems));
  result.outputs = analysis.outputShape.empty() ? 0 : analysis.outputShape[0];
  const std::string relWeights =
      fs::relative(weightsPath, projectPath.parent_path()).lexically_normal().string();
  const auto project = import::importedProject(result, projectStem(projectPath), relWeights);
  fs::create_directories(projectPath.parent_path());
  fs::create_directories(weightsPath.parent_path());
  checkpoint::writeSafetensors(
      weightsPath.string(), result.weights,
      {{"source", fs::path(model).filename().string()}, {"format", "netsmith-imported-weights"}});
  writeFileAtomically(projectPath.string(), project::serialiseProject(project));

  std::int64_t params = 0, trainable = 0;
  for (const auto& n : analysis.nodes) {
    params += n.paramCount;
    trainable += n.trainableParams;
  }
  const auto& in = result.model.input;
  const std::string inputText = std::to_string(in.channels) + "x" + std::to_string(in.height) +
                                "x" + std::to_string(in.width);
  if (args.has("--json")) {
    Json j = Json::object();
    j["model"] = model;
    j["producer"] = result.producer;
    j["opset"] = result.opset;
    j["nodes"] = static_cast<std::int64_t>(result.model.nodes.size());
    j["parameters"] = params;
    j["trainable_parameters"] = trainable;
    j["head"] = head;
    j["frozen"] = frozen;
    j["input"] = inputText;
    j["outputs"] = result.outputs;
    j["notes"] = result.notes;
    j["project"] = projectPath.string();
    j["weights"] = weightsPath.string();
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::printf(
      "imported %s (%s, opset %lld): %zu nodes, %lld parameters (%lld trainable), input %s, "
      "%lld outputs\n",
      model.c_str(), result.producer.empty() ? "unknown producer" : result.producer.c_str(),
      (long long)result.opset, result.model.nodes.size(), (long long)params, (long long)trainable,
      inputText.c_str(), (long long)result.outputs);
  for (const auto& n : result.notes)
    std::printf("  rewritten: %s\n", n.c_str());
  std::printf("wrote %s\n  and its weights %s (init_from)\n", projectPath.string().c_str(),
              weightsPath.string().c_str());
  std::printf("next: point data.train at your images, then\n  netsmith-cli train %s\n",
              projectPath.string().c_str());
  return kExitOk;
}

}  // namespace netsmith::cli
