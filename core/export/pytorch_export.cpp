#include "export/pytorch_export.h"

#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "common/error.h"
#include "graph/graph_analysis.h"
#include "netsmith/version.h"
#include "task/detection_head.h"

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

// A detector's decoding in plain torch, after `def decode(head, stride=S, classes=K, ...):`,
// following task/detection_head.h step by step (the C++ decodeDetections' arithmetic: the
// distances in float32, the points, sums and clipping in float64).
constexpr const char* kDecodeBody =
    R"PY(    """Detections from the model's output, as Netsmith decodes them.

    head: N x (classes + 5) x H x W, per location (row i, column j) the class logits, the box
    distances left, top, right, bottom (each exp(min(raw, 10)) x stride pixels) and the
    centre-ness logit. The location stands for the input point (px, py) =
    ((j + 0.5) x stride, (i + 0.5) x stride); its box is [px - left, py - top, px + right,
    py + bottom], clipped to the input (INPUT_SIZE). Its score for a class is
    sqrt(sigmoid(class logit) x sigmoid(centre-ness logit)). Per image: the scores >=
    score_threshold; of those the pre_nms best (equal scores: the lower class, then row, then
    column first); a box of no width or height after clipping dropped; class-aware non-maximum
    suppression (a box goes when its IoU with a kept, better box of its class is > nms_iou;
    torchvision's batched_nms where torchvision is installed, else the same greedy loop in
    plain torch); the max_detections best.

    Returns a list with one (boxes, scores, classes) per image, best first: boxes D x 4
    [x0, y0, x1, y1] in input pixels (float32), scores D (float32), classes D (int64).
    """
    head = head.detach().float()
    n, _, h, w = head.shape
    k = classes
    height, width = INPUT_SIZE[1], INPUT_SIZE[2]
    scores = torch.sqrt(torch.sigmoid(head[:, :k]) * torch.sigmoid(head[:, k + 4:k + 5]))
    scores = scores.reshape(n, k * h * w)  # class, then row, then column
    distances = (head[:, k:k + 4].clamp(max=10.0).exp() * stride).double()
    cells = dict(dtype=torch.float64, device=head.device)
    px = ((torch.arange(w, **cells) + 0.5) * stride).view(1, w)
    py = ((torch.arange(h, **cells) + 0.5) * stride).view(h, 1)
    boxes = torch.stack([(px - distances[:, 0]).clamp(0, width),
                         (py - distances[:, 1]).clamp(0, height),
                         (px + distances[:, 2]).clamp(0, width),
                         (py + distances[:, 3]).clamp(0, height)], dim=-1)
    boxes = boxes.float().reshape(n, h * w, 4)
    detections = []
    for i in range(n):
        found = torch.nonzero(scores[i] >= score_threshold).flatten()
        order = torch.sort(scores[i][found], descending=True, stable=True).indices
        found = found[order[:pre_nms]]
        image_boxes = boxes[i][found % (h * w)]
        image_scores = scores[i][found]
        image_classes = torch.div(found, h * w, rounding_mode="floor")
        real = (image_boxes[:, 2] > image_boxes[:, 0]) & (image_boxes[:, 3] > image_boxes[:, 1])
        image_boxes, image_scores = image_boxes[real], image_scores[real]
        image_classes = image_classes[real]
        keep = class_nms(image_boxes, image_scores, image_classes, nms_iou)[:max_detections]
        detections.append((image_boxes[keep], image_scores[keep], image_classes[keep]))
    return detections


try:
    from torchvision.ops import batched_nms
except ImportError:  # torchvision is optional: class_nms has the same loop in plain torch
    batched_nms = None


def class_nms(boxes, scores, classes, iou):
    """Class-aware greedy non-maximum suppression: the kept indices, best score first (equal
    scores: the lower index first), a box dropped when its IoU with a kept box of its class is
    > iou."""
    if batched_nms is not None:
        return batched_nms(boxes, scores, classes, iou)
    order = torch.sort(scores, descending=True, stable=True).indices
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    kept = []
    for i in order.tolist():
        if kept:
            best = torch.tensor(kept, dtype=torch.int64, device=boxes.device)
            w = (torch.minimum(boxes[best, 2], boxes[i, 2]) -
                 torch.maximum(boxes[best, 0], boxes[i, 0])).clamp(min=0)
            h = (torch.minimum(boxes[best, 3], boxes[i, 3]) -
                 torch.maximum(boxes[best, 1], boxes[i, 1])).clamp(min=0)
            overlap = w * h / (area[best] + area[i] - w * h)
            if bool(((classes[best] == classes[i]) & (overlap > iou)).any()):
                continue
        kept.append(i)
    return torch.tensor(kept, dtype=torch.int64, device=boxes.device)
)PY";

std::string pyList(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + ops::pyNumber(v[i]);
  return out + "]";
}

/// The Python code of the model's nodes, as emitNodes writes it.
struct ModuleCode {
  std::string init;                        ///< __init__'s lines after super().__init__()
  std::string forward;                     ///< forward()'s lines before its return
  std::map<std::string, std::string> var;  ///< node id -> Python variable
};

/// Emits each node's submodule (in __init__) and its step of forward(), in topological order.
ModuleCode emitNodes(const ExportModel& model, const graph::GraphAnalysis& analysis) {
  std::map<std::string, const graph::Node*> nodes;
  for (const auto& node : model.project.model.nodes)
    nodes[node.id] = &node;

  std::ostringstream init, forward;
  ModuleCode code;
  auto& var = code.var;  // node id -> Python variable
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
  code.init = init.str();
  code.forward = forward.str();
  return code;
}

/// A detector's decode() with the task's stride and classes, or a comment on why it is left out.
std::string decodeFunction(const Shape& out, const graph::InputSpec& in) {
  const std::int64_t k = out.size() == 3 ? out[0] - 5 : 0;
  std::int64_t stride = 0;
  const auto problem = task::detectionOutputProblem(out, k, in.height, in.width, &stride);
  const task::DetectionHeadParams p{};
  if (problem) {
    return "# decode() is left out: the model's output is no detection head (" + *problem +
           ")\n\n\n";
  }
  return "def decode(head, stride=" + std::to_string(stride) + ", classes=" + std::to_string(k) +
         ", score_threshold=" + ops::pyNumber(p.scoreThreshold) +
         ", nms_iou=" + ops::pyNumber(p.nmsIou) +
         ",\n           max_detections=" + std::to_string(p.maxDetections) +
         ", pre_nms=" + std::to_string(p.preNms) + "):\n" + kDecodeBody + "\n\n";
}

/// Writes model.py's docstring, imports and constants (names, input size, normalisation).
void writeHeader(std::ostream& py, const ExportModel& model, bool hasDecode) {
  const auto& in = model.project.model.input;
  // Names and paths from the project stay out of the docstring: they are data (PROJECT_NAME,
  // SOURCE, CLASSES), written as literals, so no text of theirs can become code.
  py << "\"\"\"A PyTorch model generated by Netsmith " << NETSMITH_VERSION
     << " (see PROJECT_NAME and SOURCE).\n\n"
     << "    model = Model()\n"
     << "    model.load_state_dict(load_safetensors(\"model.safetensors\"), strict=True)\n"
     << "    model.eval()\n"
     << "    logits = model(preprocess(images))  # images: N x H x W x C uint8 (0..255)\n"
     << (hasDecode ? "    detections = decode(logits)  # per image (boxes, scores, classes)\n" : "")
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
     << "STD = " << (model.std.empty() ? "None" : pyList(model.std)) << "\n"
     << (model.temperature != 1
             ? "TEMPERATURE = " + ops::pyNumber(model.temperature) +
                   "  # temperature scaling: forward() divides the output by it\n"
             : std::string())
     << "\n\n";
}

/// Writes the Model class: its submodules in __init__ and the graph in forward().
void writeModelClass(std::ostream& py, const ExportModel& model, const ModuleCode& code,
                     const std::string& outputId) {
  const auto& in = model.project.model.input;
  py << "class Model(nn.Module):\n"
     << "    def __init__(self):\n"
     << "        super().__init__()\n"
     << code.init << "\n"
     << "    def forward(self, x):  # x: N x " << in.channels << " x " << in.height << " x "
     << in.width << "\n"
     << code.forward << "        return " << code.var.at(outputId)
     << (model.temperature != 1 ? " / TEMPERATURE" : "") << "\n\n\n";
}

/// Writes preprocess() and load_safetensors(), the helpers every model.py has.
void writeHelpers(std::ostream& py) {
  py << "def preprocess(images):\n"
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
     << "    return state\n\n\n";
}

}  // namespace

std::string generatePyTorch(const ExportModel& model, bool boxDecoder) {
  const auto analysis = graph::analyseGraph(model.project.model, *model.registry);
  if (!analysis.ok()) throw Error("the model has problems; fix them before exporting");
  const ModuleCode code = emitNodes(model, analysis);
  // A detector's model.py decodes its output too, with the task's stride and classes.
  std::string decode;
  if (boxDecoder) decode = decodeFunction(analysis.outputShape, model.project.model.input);
  std::ostringstream py;
  writeHeader(py, model, decode.rfind("def", 0) == 0);
  writeModelClass(py, model, code, analysis.outputId);
  writeHelpers(py);
  py << decode << "if __name__ == \"__main__\":\n"
     << "    import sys\n"
     << "    model = Model()\n"
     << "    if len(sys.argv) > 1:\n"
     << "        model.load_state_dict(load_safetensors(sys.argv[1]), strict=True)\n"
     << "    print(model)\n";
  return py.str();
}

}  // namespace netsmith::exporting
