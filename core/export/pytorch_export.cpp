#include "export/pytorch_export.h"

#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "netsmith/version.h"

namespace netsmith::exporting {

namespace {

bool isPythonKeyword(const std::string& s) {
  static const std::set<std::string> kWords{
      "False",   "None",     "True",     "and",    "as",    "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",   "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",    "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass",  "raise",  "return", "try",
      "while",   "with",     "yield",    "self",   "torch", "nn",     "F"};
  return kWords.count(s) > 0;
}

// Names nn.Module itself uses: no submodule can take them.
bool clashesWithModule(const std::string& s) {
  static const std::set<std::string> kNames{"training",
                                            "forward",
                                            "eval",
                                            "train",
                                            "to",
                                            "cuda",
                                            "cpu",
                                            "float",
                                            "double",
                                            "half",
                                            "type",
                                            "apply",
                                            "state_dict",
                                            "load_state_dict",
                                            "parameters",
                                            "buffers",
                                            "modules",
                                            "children",
                                            "zero_grad",
                                            "register_buffer",
                                            "register_parameter",
                                            "add_module",
                                            "named_parameters",
                                            "named_buffers",
                                            "named_modules",
                                            "named_children",
                                            "requires_grad_"};
  return kNames.count(s) > 0 || s.rfind("_", 0) == 0;
}

/// A Python string literal of any text: JSON's string syntax (quotes, backslashes and control
/// characters escaped) is valid Python, and bytes that are not UTF-8 become U+FFFD. Every text
/// that comes from a project or checkpoint reaches the generated file only this way.
std::string pyString(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string pyList(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + ops::pyNumber(v[i]);
  return out + "]";
}

}  // namespace

std::string generatePyTorch(const ExportModel& model) {
  const auto analysis = graph::analyseGraph(model.project.model, *model.registry);
  if (!analysis.ok()) throw Error("the model has problems; fix them before exporting");
  std::map<std::string, const graph::Node*> nodes;
  for (const auto& node : model.project.model.nodes)
    nodes[node.id] = &node;

  std::ostringstream init, forward;
  std::map<std::string, std::string> var;  // node id -> Python variable
  for (const auto& info : analysis.nodes) {
    const auto& node = *nodes.at(info.id);
    if (!info.def->toPyTorch) {
      throw Error("node \"" + node.id + "\": " + info.def->name + " has no PyTorch code export");
    }
    ops::EmitNode n{node.id, info.params, info.inputShapes, info.outputShape, {}};
    if (info.def->isSource) n.inputs.push_back("x");
    for (const auto& src : node.inputs)
      n.inputs.push_back(var.at(src));
    const auto py = info.def->toPyTorch(n);
    if (clashesWithModule(node.id)) {
      throw Error("node \"" + node.id + "\": PyTorch's nn.Module already has an attribute of " +
                  "that name, so the weights could not load under it; rename the node");
    }
    const bool plain = !isPythonKeyword(node.id);
    std::string access = plain ? "self." + node.id : "getattr(self, " + pyString(node.id) + ")";
    if (!py.module.empty()) {
      if (plain)
        init << "        self." << node.id << " = " << py.module << "\n";
      else
        init << "        self.add_module(" << pyString(node.id) << ", " << py.module << ")\n";
    }
    std::string expr = py.forward;
    for (std::size_t at = expr.find("$m"); at != std::string::npos; at = expr.find("$m", at))
      expr.replace(at, 2, access);
    const std::string name = isPythonKeyword(node.id) ? node.id + "_" : node.id;
    var[node.id] = name;
    if (info.def->isSource && expr == "x" && name == "x") continue;
    forward << "        " << name << " = " << expr << "  # " << formatShape(info.outputShape)
            << "\n";
  }
  const auto& in = model.project.model.input;
  std::ostringstream py;
  // Names and paths from the project stay out of the docstring: they are data (PROJECT_NAME,
  // SOURCE, CLASSES), written as literals, so no text of theirs can become code.
  py << "\"\"\"A PyTorch model generated by Netsmith " << NETSMITH_VERSION
     << " (see PROJECT_NAME and SOURCE).\n\n"
     << "    model = Model()\n"
     << "    model.load_state_dict(load_safetensors(\"model.safetensors\"), strict=True)\n"
     << "    model.eval()\n"
     << "    logits = model(preprocess(images))  # images: N x H x W x C uint8 (0..255)\n"
     << "\"\"\"\n"
     << "import json\n\nimport torch\nfrom torch import nn\n\n"
     << "PROJECT_NAME = " << pyString(model.project.name) << "\n"
     << "SOURCE = " << pyString(model.source) << "\n"
     << "CLASSES = " << Json(model.classes).dump(-1, ' ', false, Json::error_handler_t::replace)
     << "\n"
     << "INPUT_SIZE = (" << in.channels << ", " << in.height << ", " << in.width
     << ")  # channels, height, width\n"
     << "CHANNEL_ORDER = " << pyString(in.channels == 1 ? "grey" : "RGB") << "\n"
     << "MEAN = " << (model.mean.empty() ? "None" : pyList(model.mean)) << "\n"
     << "STD = " << (model.std.empty() ? "None" : pyList(model.std)) << "\n\n\n"
     << "class Model(nn.Module):\n"
     << "    def __init__(self):\n"
     << "        super().__init__()\n"
     << init.str() << "\n"
     << "    def forward(self, x):  # x: N x " << in.channels << " x " << in.height << " x "
     << in.width << "\n"
     << forward.str() << "        return " << var.at(analysis.outputId) << "\n\n\n"
     << "def preprocess(images):\n"
     << "    \"\"\"uint8 images (N x H x W x C, or N x H x W for grey) -> normalised float "
        "N x C x H x W.\"\"\"\n"
     << "    x = torch.as_tensor(images).float() / 255.0\n"
     << "    x = x.unsqueeze(-1) if x.dim() == 3 else x\n"
     << "    x = x.permute(0, 3, 1, 2)\n"
     << "    if MEAN is not None:\n"
     << "        x = (x - torch.tensor(MEAN).view(1, -1, 1, 1)) / torch.tensor(STD).view(1, -1, "
        "1, 1)\n"
     << "    return x\n\n\n"
     << "def load_safetensors(path):\n"
     << "    \"\"\"Reads a safetensors file into a state dict (no `safetensors` package "
        "needed).\"\"\"\n"
     << "    dtypes = {\"F32\": torch.float32, \"F64\": torch.float64, \"F16\": torch.float16,\n"
     << "              \"BF16\": torch.bfloat16, \"I64\": torch.int64, \"I32\": torch.int32,\n"
     << "              \"I16\": torch.int16, \"I8\": torch.int8, \"U8\": torch.uint8, "
        "\"BOOL\": torch.bool}\n"
     << "    with open(path, \"rb\") as f:\n"
     << "        size = int.from_bytes(f.read(8), \"little\")\n"
     << "        header = json.loads(f.read(size))\n"
     << "        data = f.read()\n"
     << "    state = {}\n"
     << "    for name, info in header.items():\n"
     << "        if name == \"__metadata__\":\n"
     << "            continue\n"
     << "        start, end = info[\"data_offsets\"]\n"
     << "        dtype = dtypes[info[\"dtype\"]]\n"
     << "        flat = (torch.frombuffer(bytearray(data[start:end]), dtype=dtype) if end > start\n"
     << "                else torch.empty(0, dtype=dtype))\n"
     << "        state[name] = flat.reshape(info[\"shape\"]).clone()\n"
     << "    return state\n\n\n"
     << "if __name__ == \"__main__\":\n"
     << "    import sys\n"
     << "    model = Model()\n"
     << "    if len(sys.argv) > 1:\n"
     << "        model.load_state_dict(load_safetensors(sys.argv[1]), strict=True)\n"
     << "    print(model)\n";
  return py.str();
}

}  // namespace netsmith::exporting
