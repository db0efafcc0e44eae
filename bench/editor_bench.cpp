// editor_bench: a 200-node model in the editor; prints how long one edit takes to re-analyse
// (shape inference of the whole graph) and to redraw the Model page (canvas, table, totals).
//   editor_bench [--nodes N] [--edits K]
#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "editor/model_editor.h"
#include "editor/model_page.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "session/project_document.h"

namespace {
double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::size_t(p * double(v.size() - 1))];
}
}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  int nodes = 200, edits = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--nodes")) nodes = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--edits")) edits = std::atoi(argv[i + 1]);
  }
  // A chain of conv-BN-ReLU blocks on a 3x32x32 input.
  netsmith::project::Project project;
  project.name = "bench";
  project.model.input = {3, 32, 32};
  netsmith::graph::Node input;
  input.id = "input";
  input.op = "Input";
  project.model.nodes.push_back(input);
  const char* ops[] = {"Conv2d", "BatchNorm2d", "ReLU"};
  for (int i = 1; i < nodes; ++i) {
    netsmith::graph::Node n;
    n.op = ops[(i - 1) % 3];
    n.id = "n" + std::to_string(i);
    n.inputs = {project.model.nodes.back().id};
    if (n.op == "Conv2d") n.params = {{"out_channels", 16}, {"kernel_size", 3}, {"padding", 1}};
    n.y = 80.0 * i;
    project.model.nodes.push_back(n);
  }
  QTemporaryDir dir;
  const QString path = dir.filePath("bench.netsmith.json");
  netsmith::project::saveProject(project, path.toStdString());

  const auto registries = netsmith::Registries::builtins();
  netsmith::ui::ProjectDocument doc(registries);
  netsmith::ui::ModelPage page(&doc);
  page.resize(1400, 900);
  page.show();
  QElapsedTimer clock;
  clock.start();
  doc.load(path);
  app.processEvents();
  std::printf("open a %d-node model (analysis, canvas, table): %.1f ms\n", nodes,
              double(clock.nsecsElapsed()) / 1e6);
  std::vector<double> analysis, cycle;
  for (int k = 0; k < edits; ++k) {
    clock.restart();
    // A new value every time (consecutive edits of one field merge into one undo step, but
    // each is applied and analysed).
    page.editor()->setParam("n1", "out_channels", 17 + k);
    cycle.push_back(double(clock.nsecsElapsed()) / 1e6);
    analysis.push_back(doc.lastAnalysisMs());
    app.processEvents();
  }
  std::printf(
      "per edit, %d edits of %d nodes: re-analysis p50 %.2f ms, p99 %.2f ms (target < 10 "
      "ms); whole edit with the page redrawn p50 %.1f ms, p99 %.1f ms\n",
      edits, nodes, percentile(analysis, 0.5), percentile(analysis, 0.99), percentile(cycle, 0.5),
      percentile(cycle, 0.99));
  std::printf("problems: %zu, parameters: %lld\n", doc.problems().size(),
              (long long)doc.analysis().totalParams);
  return 0;
}
