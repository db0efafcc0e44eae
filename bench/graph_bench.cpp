// Prints how long shape inference and validation take on graphs of growing size (the editor
// reruns them on every edit; target: under 10 ms for 200 nodes), and the BLAS throughput.
#include <chrono>
#include <cstdio>
#include <string>

#include "env/env_report.h"
#include "graph/graph_analysis.h"
#include "ops/op_registry.h"

using namespace netsmith;

namespace {

// A residual tower: stem conv, then blocks of conv-bn-relu-conv-bn-add-relu, then the head.
graph::ModelGraph tower(int blocks) {
  graph::ModelGraph g;
  g.input = {3, 64, 64};
  auto add = [&](const std::string& id, const std::string& op, std::vector<std::string> inputs,
                 Json params = Json::object()) {
    graph::Node n;
    n.id = id;
    n.op = op;
    n.inputs = std::move(inputs);
    n.params = std::move(params);
    g.nodes.push_back(std::move(n));
  };
  add("input", "Input", {});
  add("stem", "Conv2d", {"input"}, Json{{"out_channels", 32}, {"padding", 1}});
  std::string prev = "stem";
  for (int b = 0; b < blocks; ++b) {
    const std::string p = "b" + std::to_string(b) + "_";
    add(p + "c1", "Conv2d", {prev}, Json{{"out_channels", 32}, {"padding", "same"}});
    add(p + "n1", "BatchNorm2d", {p + "c1"});
    add(p + "r1", "ReLU", {p + "n1"});
    add(p + "c2", "Conv2d", {p + "r1"}, Json{{"out_channels", 32}, {"padding", "same"}});
    add(p + "n2", "BatchNorm2d", {p + "c2"});
    add(p + "add", "Add", {p + "n2", prev});
    add(p + "out", "ReLU", {p + "add"});
    prev = p + "out";
  }
  add("gap", "GlobalAvgPool", {prev});
  add("flat", "Flatten", {"gap"});
  add("fc", "Linear", {"flat"}, Json{{"out_features", 10}});
  return g;
}

}  // namespace

int main() {
  const auto registry = ops::OpRegistry::withBuiltins();
  std::printf("%-8s %-12s %-14s\n", "nodes", "analyse ms", "valid");
  for (int blocks : {5, 14, 28, 57, 114}) {
    const auto g = tower(blocks);
    const int reps = 50;
    graph::GraphAnalysis a;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
      a = graph::analyseGraph(g, registry);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count() /
        reps;
    std::printf("%-8zu %-12.3f %-14s\n", g.nodes.size(), ms, a.ok() ? "yes" : "NO");
  }
  env::configureThreads();
  const auto r = env::collectEnvReport(true);
  std::printf("\nBLAS: %s, %d threads, fp32 512x512 matmul %.1f GFLOP/s\n", r.blasName.c_str(),
              r.intraOpThreads, r.matmulGflops);
  return 0;
}
