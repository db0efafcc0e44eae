// The ONNX importer: the protobuf read into plain values (tensor sizes against their shapes),
// then the conversion to a Netsmith graph and its analysis. Only netsmith::Error may come out;
// an import that succeeds must give a graph that checks, and weights that came from the file.
#include "common/error.h"
#include "graph/graph_analysis.h"
#include "import/onnx_import.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  static const auto& registry = ops::OpRegistry::withBuiltins();
  try {
    const auto graph = import::parseOnnxGraph(bytes, "fuzz.onnx");
    const auto result = import::importOnnxGraph(graph, "fuzz.onnx", {}, registry);
    if (!graph::analyseGraph(result.model, registry).ok()) __builtin_trap();
    std::int64_t total = 0;
    for (const auto& [name, tensor] : result.weights)
      total += tensor.numel();
    // Each weight element came from at least one byte of the file (float16 is the smallest).
    if (total > static_cast<std::int64_t>(size)) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
