#include "export/onnx_model.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "checkpoint/checkpoint_model.h"
#include "common/error.h"
#include "common/file_util.h"
#include "common/text_format.h"
#include "export/onnx_export.h"
#include "export/onnx_parity.h"
#include "export/onnx_runtime.h"
#include "graph/graph_analysis.h"
#include "registries/registries.h"

namespace netsmith::exporting {

namespace {

/// Metadata values, each read once.
using Metadata = std::map<std::string, std::string>;

const std::string& need(const Metadata& m, const std::string& key, const std::string& path) {
  const auto it = m.find(key);
  if (it == m.end())
    throw Error(path + ": the file records no \"" + key +
                "\" (metadata_props): was it exported by an older Netsmith? Export it again");
  return it->second;
}

/// A JSON list of numbers or strings from the metadata ("" when absent).
template <typename T>
std::vector<T> listOf(const Metadata& m, const std::string& key, const std::string& path) {
  const auto it = m.find(key);
  if (it == m.end()) return {};
  try {
    return Json::parse(it->second).get<std::vector<T>>();
  } catch (const std::exception&) {
    throw Error(path + ": metadata \"" + key + "\" is not a list of the kind it should be");
  }
}

}  // namespace

bool isOnnxPath(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".onnx";
}

OnnxModelFile readOnnxModelFile(const std::string& path, const RegistriesPtr& registries) {
  const auto& r = needRegistries(registries, "readOnnxModelFile");
  requireRegularFile(path);
  const std::string bytes = readTextFile(path, std::uint64_t(2) << 30);
  OnnxInfo info;
  try {
    info = inspectOnnx(bytes);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  Metadata m;
  for (const auto& [k, v] : info.metadata)
    m.emplace(k, v);
  if (!m.count("netsmith_snapshot"))
    throw Error(path +
                ": the file carries no Netsmith project (metadata \"netsmith_snapshot\"): a "
                "model exported elsewhere is imported first (netsmith-cli import " +
                path + "), then trained or exported; an older Netsmith export is exported again");
  OnnxModelFile out;
  auto& model = out.model;
  const auto loaded =
      project::parseProject(m.at("netsmith_snapshot"), path + " (netsmith_snapshot)");
  if (!loaded.problems.empty())
    throw Error(path + ": the file's project snapshot has problems:\n" +
                formatProblems(loaded.problems));
  model.project = loaded.project;
  model.source = path;
  model.baseDir = std::filesystem::path(path).parent_path().string();
  model.registry = std::shared_ptr<const ops::OpRegistry>(registries, &r.ops);
  const auto analysis = graph::analyseGraph(model.project.model, r.ops);
  if (!analysis.ok())
    throw Error(path + ": the file's project snapshot has a model that is not valid:\n" +
                formatProblems(analysis.problems));
  // A model is refused when the file is too small to hold its weights (one byte each at
  // least, int8; batch norms folded away hold 4 values per channel): the snapshot cannot
  // ask for more memory than the file's size suggests.
  if (analysis.totalParams > 8 * std::int64_t(bytes.size()) + 4096)
    throw Error(path + ": the file's project snapshot has a model of " +
                std::to_string(analysis.totalParams) +
                " parameters, more than a file of this size holds");
  model.classes = listOf<std::string>(m, "classes", path);
  model.mean = listOf<double>(m, "normalization_mean", path);
  model.std = listOf<double>(m, "normalization_std", path);
  if (model.mean.size() != model.std.size())
    throw Error(path + ": metadata normalization_mean and normalization_std differ in length");
  const std::string& fit = need(m, "fit", path);
  if (fit == "resize")
    model.fit = data::FitPolicy::Resize;
  else if (fit == "resize_crop")
    model.fit = data::FitPolicy::ResizeCrop;
  else
    throw Error(path + ": metadata \"fit\" must be resize or resize_crop, got \"" +
                printable(fit.substr(0, 40)) + "\"");
  if (m.count("task_state")) {
    try {
      model.taskState = Json::parse(m.at("task_state"));
    } catch (const std::exception&) {
      throw Error(path + ": metadata \"task_state\" is not JSON");
    }
  }
  if (const auto it = m.find("task"); it != m.end() && it->second != model.project.task)
    throw Error(path + ": metadata \"task\" (" + printable(it->second.substr(0, 40)) +
                ") is not its snapshot's task (" + model.project.task + ")");
  out.output = need(m, "output", path);
  if (std::find(info.outputs.begin(), info.outputs.end(), out.output) == info.outputs.end())
    throw Error(path + ": the file has no output \"" + printable(out.output.substr(0, 40)) +
                "\", which its metadata names");
  if (std::find(info.inputs.begin(), info.inputs.end(), "input") == info.inputs.end())
    throw Error(path + ": the file has no input \"input\"");
  return out;
}

checkpoint::LoadedModel loadOnnxModel(const std::string& path, const RegistriesPtr& registries) {
  auto file = readOnnxModelFile(path, registries);
  std::string whyNot;
  const auto ort = findOnnxRuntime(&whyNot);
  if (!ort) throw Error(path + ": an ONNX file is run in ONNX Runtime: " + whyNot);
  auto& model = file.model;
  model.runtime = ort->name();
  model.runner = [ort = *ort, path, output = file.output](const torch::Tensor& input) {
    OnnxRuntimeFeed feed;
    feed.inputs.emplace("input", toHostTensor(input));
    feed.outputs = {output};
    const auto results = runOnnxRuntime(ort, path, {feed});
    const HostTensor& t = results.at(0).at(output);
    if (t.isInt) throw Error(path + ": output \"" + output + "\" holds integers");
    return torch::from_blob(const_cast<float*>(t.values.data()), t.dims, torch::kFloat).clone();
  };
  return std::move(model);
}

checkpoint::LoadedModel loadAnyModel(const std::string& path, const RegistriesPtr& registries) {
  return isOnnxPath(path) ? loadOnnxModel(path, registries)
                          : checkpoint::loadModel(path, registries);
}

}  // namespace netsmith::exporting
