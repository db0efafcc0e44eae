// The ONNX importer's naming and constants, its refusal message, and the project around an
// import (onnx_import.cpp holds the conversion itself).
#include "import/onnx_import_support.h"

#include <cctype>
#include <vector>

#include "import/onnx_import.h"

namespace netsmith::import {

/// "/layer1/layer1.0/conv1/Conv" -> "layer1_0_conv1"; "Conv_12" -> "conv_12"; "" -> "conv".
/// torch.onnx names a node by its module scopes and op type, each scope repeating its parent's
/// name ("features", "features.1", "conv", "conv.0"): a scope that extends the previous one
/// replaces it, so the id is the module's path without the repeats.
std::string idFromName(const OnnxNode& n) {
  std::string name = n.name;
  std::vector<std::string> scopes;
  if (!name.empty() && name[0] == '/') {
    std::string rest = name.substr(1);
    std::vector<std::string> segments;
    for (std::size_t at = 0;;) {
      const auto slash = rest.find('/', at);
      segments.push_back(
          rest.substr(at, slash == std::string::npos ? std::string::npos : slash - at));
      if (slash == std::string::npos) break;
      at = slash + 1;
    }
    // The last segment is the op type (with a count): "Conv", "Relu_1".
    if (!segments.empty() && segments.back().rfind(n.opType, 0) == 0) segments.pop_back();
    for (const auto& seg : segments) {
      if (!scopes.empty() && seg.rfind(scopes.back() + ".", 0) == 0) {
        scopes.back() = seg;
      } else if (!seg.empty()) {
        scopes.push_back(seg);
      }
    }
    name.clear();
    for (const auto& sc : scopes)
      name += (name.empty() ? "" : "_") + sc;
  }
  std::string id;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!id.empty() && id.back() != '_') {
      id += '_';
    }
  }
  while (!id.empty() && id.back() == '_')
    id.pop_back();
  if (id.empty()) {
    for (const char c : n.opType)
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "n_" + id;
  return id;
}

torch::Tensor toTensor(const OnnxTensor& t) {
  std::vector<std::int64_t> dims = t.dims;
  if (t.isFloat) {
    return torch::from_blob(const_cast<float*>(t.floats.data()), dims, torch::kFloat32).clone();
  }
  if (t.undecoded) {
    throw Error("tensor \"" + printable(t.name) + "\": integer weights of " +
                std::to_string(t.numel()) + " elements are not imported (weights are floats)");
  }
  std::vector<float> f(t.ints.begin(), t.ints.end());
  return torch::from_blob(f.data(), dims, torch::kFloat32).clone();
}

UnsupportedOps::UnsupportedOps(const std::string& source, std::vector<std::string> list)
    : Error([&] {
        std::string text = source + ": " + std::to_string(list.size()) +
                           (list.size() == 1 ? " ONNX node is" : " ONNX nodes are") +
                           " not supported; nothing was written:";
        for (const auto& n : list)
          text += "\n  " + n;
        return text;
      }()),
      nodes(std::move(list)) {}

project::Project importedProject(const ImportResult& r, const std::string& name,
                                 const std::string& weightsFile) {
  project::Project p;
  p.name = name;
  p.description = "Imported from ONNX (" + (r.producer.empty() ? "unknown producer" : r.producer) +
                  ", opset " + std::to_string(r.opset) + ")";
  p.model = r.model;
  p.initFrom = weightsFile;
  // The data are the user's: an image folder next to the project by default.
  p.data = Json{{"train", Json{{"format", "image_folder"}, {"root", "data/train"}}},
                {"validation", Json{{"fraction", 0.1}, {"seed", 0}}}};
  if (!r.mean.empty() && r.mean.size() == r.std.size())
    p.data["normalize"] = Json{{"mean", r.mean}, {"std", r.std}};
  if (!r.classes.empty()) p.data["classes"] = r.classes;
  // Fine-tuning: a small learning rate, a few epochs.
  p.train = Json{{"epochs", 5},
                 {"batch_size", 32},
                 {"optimizer", Json{{"type", "adam"}, {"lr", 1e-4}}},
                 {"schedule", Json{{"type", "cosine"}}}};
  return p;
}

void noteFoldedBatchNorm(const graph::ModelGraph& model, std::vector<std::string>& notes) {
  // An eval-mode export folds BatchNorm into the convolutions: say so, since it changes what
  // fine-tuning can do.
  bool anyBatchNorm = false, anyConvBias = false;
  for (const auto& n : model.nodes) {
    anyBatchNorm = anyBatchNorm || n.op == "BatchNorm2d";
    anyConvBias = anyConvBias || (n.op == "Conv2d" && n.params.value("bias", false));
  }
  if (!anyBatchNorm && anyConvBias) {
    notes.push_back(
        "no BatchNormalization: an exporter in eval mode folds it into the convolutions' weights "
        "and biases, which are imported as they are (export with BatchNorm kept, e.g. "
        "torch.onnx.export(..., training=TrainingMode.PRESERVE, do_constant_folding=False), to "
        "fine-tune with it)");
  }
}

void readNetsmithMetadata(const std::vector<std::pair<std::string, std::string>>& metadata,
                          ImportResult& r) {
  for (const auto& [key, value] : metadata) {
    try {
      if (key == "classes") r.classes = Json::parse(value).get<std::vector<std::string>>();
      if (key == "normalization_mean") r.mean = Json::parse(value).get<std::vector<double>>();
      if (key == "normalization_std") r.std = Json::parse(value).get<std::vector<double>>();
    } catch (const std::exception&) {
      r.notes.push_back("metadata \"" + key + "\" is not readable; left out");
    }
  }
}

}  // namespace netsmith::import
