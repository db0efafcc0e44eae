// import: an ONNX classifier -> a Netsmith project and its weights (core/import).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "import/import_job.h"

namespace netsmith::cli {

namespace {

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

}  // namespace

int runImport(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("import", words);
  import::ImportRequest request;
  request.model = args.one("MODEL.onnx");
  request.project = args.option("--out");
  if (request.project.empty()) throw UsageError{"--out PROJECT.netsmith.json is required"};
  request.weights = args.option("--weights");
  if (!args.option("--input").empty()) request.input = parseInputFlag(args.option("--input"));
  request.classes = args.integer("--classes", 0, 0, 1000000);
  request.replaceHead = args.integer("--replace-head", 0, 0, 1000000);
  request.freezeTo = args.option("--freeze-to");
  request.overwrite = args.has("--force");
  if (const std::string m = args.option("--lr-mult"); !m.empty()) {
    // NODE=X: that node and every node before it at X times the learning rate.
    const auto eq = m.rfind('=');
    char* end = nullptr;
    const double x = eq == std::string::npos ? 0 : std::strtod(m.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || !end || *end != '\0' || !(x > 0) || x > 1000)
      throw UsageError{
          "--lr-mult expects NODE=X with X in (0, 1000], e.g. layer3_1_relu_1=0.1, got \"" + m +
          "\""};
    request.lrMultTo = m.substr(0, eq);
    request.lrMult = x;
  }
  const auto s = import::runImportJob(request, registries->ops);

  const std::string inputText = std::to_string(s.input.channels) + "x" +
                                std::to_string(s.input.height) + "x" +
                                std::to_string(s.input.width);
  if (args.has("--json")) {
    Json j = Json::object();
    j["model"] = request.model;
    j["producer"] = s.producer;
    j["opset"] = s.opset;
    j["nodes"] = s.nodes;
    j["parameters"] = s.params;
    j["trainable_parameters"] = s.trainable;
    j["input"] = inputText;
    j["outputs"] = s.outputs;
    j["head"] = s.head;
    j["frozen"] = s.frozen;
    j["notes"] = s.notes;
    j["project"] = s.projectPath;
    j["weights"] = s.weightsPath;
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::printf(
      "imported %s (%s, opset %lld): %lld nodes, %lld parameters (%lld trainable), input %s, "
      "%lld outputs\n",
      request.model.c_str(), s.producer.empty() ? "unknown producer" : s.producer.c_str(),
      (long long)s.opset, (long long)s.nodes, (long long)s.params, (long long)s.trainable,
      inputText.c_str(), (long long)s.outputs);
  for (const auto& n : s.notes)
    std::printf("  - %s\n", n.c_str());
  std::printf("wrote %s\n  and its weights %s (init_from)\n", s.projectPath.c_str(),
              s.weightsPath.c_str());
  std::printf("next: point data.train at your images, then\n  netsmith-cli train %s\n",
              s.projectPath.c_str());
  return kExitOk;
}

}  // namespace netsmith::cli
