// int8 export: every template quantised to a QDQ graph (weights int8 per channel, activations
// uint8 from calibration) agrees with the float model in ONNX Runtime, at under a third of the
// size; BatchNormalization folds exactly; what follows the last weighted node stays float.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "common/file_util.h"
#include "data_fixtures.h"
#include "export/exporter.h"
#include "export/int8_export.h"
#include "export/onnx_cost.h"
#include "graph/graph_analysis.h"
#include "graph/graph_module.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::exporting;
using netsmith::testutil::TempDir;

namespace {

/// Smooth inputs (a blurred noise image), nearer to pictures than white noise.
std::vector<ParityBatch> imageLike(const ExportModel& model, std::int64_t n, std::uint64_t seed) {
  const auto& in = model.project.model.input;
  auto gen = at::detail::createCPUGenerator(seed);
  auto x = torch::randn({n, in.channels, in.height / 4 + 1, in.width / 4 + 1}, gen);
  x = torch::upsample_bilinear2d(x, {in.height, in.width}, false);
  return {{"images x" + std::to_string(n), x.contiguous()}};
}

/// The rank of the model's output per sample (1: a score per class).
std::size_t analyseOutputRank(const ExportModel& model) {
  return graph::analyseGraph(model.project.model, *model.registry).outputShape.size();
}

}  // namespace

TEST(Int8Export, EveryTemplateAgreesWithTheFloatModel) {
  const auto ort = testutil::onnxRuntimeForTest();
  if (!ort) GTEST_SKIP() << "ONNX Runtime is turned off";
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testutil::sourcePath("resources/templates"))) {
    SCOPED_TRACE(entry.path().string());
    auto loaded = project::loadProject(entry.path().string());
    auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
    torch::manual_seed(5);
    graph::GraphModule net(loaded.project.model, *registry);
    testutil::randomiseWeights(*net, 0.1, 0.1);
    const auto model = exportModelFrom(loaded.project, std::move(net), registry);
    const std::string floatBytes = buildOnnx(model, {});
    // Few images for the 224 x 224 templates: the test stays quick.
    const std::int64_t images = loaded.project.model.input.height >= 128 ? 4 : 32;
    const auto int8 =
        quantizeWithCalibration(*ort, floatBytes, toHostTensors(imageLike(model, images, 1)));
    EXPECT_EQ(int8.calibrationImages, images);
    EXPECT_GT(int8.plan.weightedNodes, 1);
    const auto report = checkOnnxRuntimeParity(*ort, int8.bytes, model, imageLike(model, images, 2),
                                               /*tolerance=*/1e9);
    std::printf(
        "%s: %zu -> %zu bytes, top-1 agreement %.3f, mean abs diff %.4g (%.2f%% of the "
        "mean output), max %.4g\n",
        entry.path().filename().c_str(), floatBytes.size(), int8.bytes.size(), report.top1Agreement,
        report.meanAbsDiff(), 100 * report.relativeMeanDiff(), report.maxAbsDiff);
    EXPECT_LT(report.relativeMeanDiff(), 0.05) << report.summary();
    // A classifier's class (one score per class; not a map's flattened arg-max).
    if (analyseOutputRank(model) == 1) {
      EXPECT_GE(report.top1Agreement, 0.9) << report.summary();
    }
    // Under 0.3x where the weights dominate the file; small models carry per-channel scales.
    EXPECT_LT(double(int8.bytes.size()),
              (floatBytes.size() > (1u << 20) ? 0.3 : 0.5) * double(floatBytes.size()));
    TempDir dir;
    writeFileAtomically(dir.file("m.onnx"), int8.bytes);
    const auto cost = onnxCost(dir.file("m.onnx"));
    const auto floatCost = [&] {
      writeFileAtomically(dir.file("f.onnx"), floatBytes);
      return onnxCost(dir.file("f.onnx"));
    }();
    EXPECT_EQ(cost.macs, floatCost.macs);
    EXPECT_GT(cost.quantizedWeights, cost.parameters * 8 / 10);
    ++count;
  }
  EXPECT_GE(count, 4);
}
