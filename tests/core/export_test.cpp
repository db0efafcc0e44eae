// Export: every op (alone and in small graphs, random parameters) and every template goes to
// ONNX, passes onnx::checker and matches LibTorch in OpenCV DNN and ONNX Runtime; metadata
// round-trips; unexportable nodes are refused by name; the generated model.py matches LibTorch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <opencv2/dnn.hpp>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "data_fixtures.h"
#include "export/exporter.h"
#include "export/pytorch_export.h"
#include "graph/graph_module.h"
#include "pytorch_reference.h"
#include "task/detection.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::exporting;
using netsmith::testutil::TempDir;

namespace {

/// A model around `nodes` (after an Input of C x H x W) with random weights and statistics.
ExportModel randomModel(const std::string& nodes, int c = 3, int h = 12, int w = 12,
                        std::uint64_t seed = 1) {
  auto loaded =
      testutil::parseModel(R"({"input": {"channels": )" + std::to_string(c) + R"(, "height": )" +
                           std::to_string(h) + R"(, "width": )" + std::to_string(w) +
                           R"(}, "nodes": [{"id": "input", "op": "Input"}, )" + nodes + "]}");
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
  torch::manual_seed(seed);
  graph::GraphModule net(loaded.project.model, *registry);
  testutil::randomiseWeights(*net, 0.5, 0.3);
  auto m = exportModelFrom(loaded.project, std::move(net), registry);
  m.classes = {"a", "b"};
  m.mean = {0.5};
  m.std = {0.25};
  return m;
}

ParityReport parity(const ExportModel& m, int opset = 13) {
  OnnxOptions o;
  o.opset = opset;
  return checkOnnxParity(buildOnnx(m, o), m, randomParityBatches(m));
}

}  // namespace

struct OpCase {
  const char* name;
  const char* nodes;  // after {"id": "input", "op": "Input"}
};

class OnnxOpParity : public ::testing::TestWithParam<OpCase> {};

TEST_P(OnnxOpParity, CheckerPassesAndBothRuntimesMatchLibTorch) {
  const auto model = randomModel(GetParam().nodes);
  for (int opset : {13, 17}) {
    const auto report = parity(model, opset);
    EXPECT_TRUE(report.passed()) << GetParam().name << " opset " << opset << ": "
                                 << report.summary();
    EXPECT_EQ(report.samples, 8);  // batches of 7 and 1: the batch dimension is dynamic
    EXPECT_EQ(report.top1Agreement, 1.0) << report.summary();
  }  // And in ONNX Runtime, the runtime most users deploy with.
  if (const auto ort = testutil::onnxRuntimeForTest()) {
    const auto report =
        checkOnnxRuntimeParity(*ort, buildOnnx(model, {}), model, randomParityBatches(model));
    EXPECT_TRUE(report.passed()) << GetParam().name << ": " << report.summary();
    EXPECT_EQ(report.samples, 8);
  }
}

#define CONV(id, params, in) \
  R"({"id": ")" id R"(", "op": "Conv2d", "params": )" params R"(, "inputs": [")" in R"("]})"

INSTANTIATE_TEST_SUITE_P(
    Export, OnnxOpParity,
    ::testing::Values(
        OpCase{"conv_pad1",
               CONV("c", R"({"out_channels": 4, "kernel_size": 3, "padding": 1})", "input")},
        OpCase{"conv_same_odd",
               CONV("c", R"({"out_channels": 4, "kernel_size": 5, "padding": "same"})", "input")},
        OpCase{"conv_same_even",
               CONV("c", R"({"out_channels": 4, "kernel_size": 4, "padding": "same"})", "input")},
        OpCase{
            "conv_stride_dilation_groups_nobias",
            CONV(
                "c",
                R"({"out_channels": 6, "kernel_size": [3, 2], "stride": 2, "dilation": 2, "groups": 3, "bias": false})",
                "input")},
        OpCase{"batchnorm", CONV("c", R"({"out_channels": 4, "kernel_size": 3})", "input") R"(,
               {"id": "bn", "op": "BatchNorm2d", "inputs": ["c"]})"},
        OpCase{
            "batchnorm_not_affine",
            R"({"id": "bn", "op": "BatchNorm2d", "params": {"affine": false, "eps": 0.001}, "inputs": ["input"]})"},
        OpCase{"relu", R"({"id": "a", "op": "ReLU", "inputs": ["input"]})"},
        OpCase{
            "leaky_relu",
            R"({"id": "a", "op": "LeakyReLU", "params": {"negative_slope": 0.2}, "inputs": ["input"]})"},
        OpCase{"gelu_erf", R"({"id": "a", "op": "GELU", "inputs": ["input"]})"},
        OpCase{
            "gelu_tanh",
            R"({"id": "a", "op": "GELU", "params": {"approximate": "tanh"}, "inputs": ["input"]})"},
        OpCase{"silu", R"({"id": "a", "op": "SiLU", "inputs": ["input"]})"},
        OpCase{"relu6", R"({"id": "a", "op": "ReLU6", "inputs": ["input"]})"},
        OpCase{
            "zeropad_conv",
            R"({"id": "z", "op": "ZeroPad2d", "params": {"left": 0, "right": 1, "top": 2, "bottom": 0}, "inputs": ["input"]},
               {"id": "c", "op": "Conv2d", "params": {"out_channels": 4, "stride": 2}, "inputs": ["z"]})"},
        OpCase{"hardsigmoid", R"({"id": "a", "op": "Hardsigmoid", "inputs": ["input"]})"},
        OpCase{"hardswish", R"({"id": "a", "op": "Hardswish", "inputs": ["input"]})"},
        OpCase{"sigmoid", R"({"id": "a", "op": "Sigmoid", "inputs": ["input"]})"},
        OpCase{"tanh", R"({"id": "a", "op": "Tanh", "inputs": ["input"]})"},
        OpCase{"softmax_channels", R"({"id": "a", "op": "Softmax", "inputs": ["input"]})"},
        OpCase{
            "maxpool",
            R"({"id": "p", "op": "MaxPool2d", "params": {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": true}, "inputs": ["input"]})"},
        OpCase{
            "avgpool",
            R"({"id": "p", "op": "AvgPool2d", "params": {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": false}, "inputs": ["input"]})"},
        OpCase{
            "avgpool_ceil",
            R"({"id": "p", "op": "AvgPool2d", "params": {"kernel_size": 2, "ceil_mode": true}, "inputs": ["input"]})"},
        OpCase{"global_avgpool", R"({"id": "g", "op": "GlobalAvgPool", "inputs": ["input"]})"},
        OpCase{"flatten_linear_softmax", R"({"id": "f", "op": "Flatten", "inputs": ["input"]},
               {"id": "fc", "op": "Linear", "params": {"out_features": 5, "bias": false}, "inputs": ["f"]},
               {"id": "s", "op": "Softmax", "inputs": ["fc"]})"},
        OpCase{"dropouts_and_identity", R"({"id": "d", "op": "Dropout", "inputs": ["input"]},
               {"id": "d2", "op": "Dropout2d", "inputs": ["d"]}, {"id": "i", "op": "Identity", "inputs": ["d2"]},
               {"id": "r", "op": "ReLU", "inputs": ["i"]})"},
        OpCase{"add_three", CONV("a", R"({"out_channels": 3, "kernel_size": 1})", "input") R"(,
               {"id": "b", "op": "Tanh", "inputs": ["input"]},
               {"id": "sum", "op": "Add", "inputs": ["a", "b", "input"]})"},
        OpCase{"concat",
               CONV("a", R"({"out_channels": 2, "kernel_size": 3, "padding": 1})", "input") R"(,
               {"id": "cat", "op": "Concat", "inputs": ["a", "input", "a"]})"},
        OpCase{
            "convtranspose_k2_s2",
            R"({"id": "t", "op": "ConvTranspose2d", "params": {"out_channels": 4}, "inputs": ["input"]})"},
        OpCase{
            "convtranspose_k3_s2_p1_op1",
            R"({"id": "t", "op": "ConvTranspose2d", "params": {"out_channels": 4, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1}, "inputs": ["input"]})"},
        OpCase{"convtranspose_groups_nobias",
               CONV("c", R"({"out_channels": 4, "kernel_size": 1})", "input") R"(,
               {"id": "t", "op": "ConvTranspose2d", "params": {"out_channels": 6, "kernel_size": [3, 2], "stride": [2, 1], "padding": [1, 0], "groups": 2, "bias": false}, "inputs": ["c"]})"},
        OpCase{
            "upsample_nearest",
            R"({"id": "u", "op": "Upsample", "params": {"scale_factor": [2, 3]}, "inputs": ["input"]})"},
        OpCase{
            "upsample_bilinear",
            R"({"id": "u", "op": "Upsample", "params": {"scale_factor": [3, 2], "mode": "bilinear"}, "inputs": ["input"]})"}),
    [](const ::testing::TestParamInfo<OpCase>& info) { return std::string(info.param.name); });

TEST(Export, EveryTemplateMatchesInOpenCv) {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testutil::sourcePath("resources/templates"))) {
    auto loaded = project::loadProject(entry.path().string());
    auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
    torch::manual_seed(2);
    graph::GraphModule net(loaded.project.model, *registry);
    {
      torch::NoGradGuard noGrad;
      for (auto& item : net->named_buffers())
        if (item.key().find("running_var") != std::string::npos) item.value().uniform_(0.5, 1.5);
    }
    const auto model = exportModelFrom(loaded.project, std::move(net), registry);
    const auto report = parity(model);
    EXPECT_TRUE(report.passed()) << entry.path() << ": " << report.summary();
    ++count;
  }
  EXPECT_GE(count, 4);
}

TEST(Export, MetadataNamesAndOpsetRoundTrip) {
  auto model = randomModel(R"({"id": "f", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["f"]})",
                           1, 8, 8);
  OnnxOptions o;
  o.opset = 11;
  o.softmax = true;
  const auto info = inspectOnnx(buildOnnx(model, o));
  EXPECT_EQ(info.opset, 11);
  EXPECT_EQ(info.irVersion, 6);
  EXPECT_EQ(info.inputs, std::vector<std::string>{"input"});
  EXPECT_EQ(info.outputs, (std::vector<std::string>{"logits", "probabilities"}));
  EXPECT_EQ(info.initializers, (std::vector<std::string>{"fc.weight", "fc.bias"}));
  std::map<std::string, std::string> meta(info.metadata.begin(), info.metadata.end());
  EXPECT_EQ(meta["classes"], R"(["a","b"])");
  EXPECT_EQ(meta["input_size"], "1x8x8");
  EXPECT_EQ(meta["channel_order"], "grey");
  EXPECT_EQ(meta["normalization_mean"], "[0.5]");
  EXPECT_EQ(meta["normalization_std"], "[0.25]");
  // Dropout and Identity leave no node behind.
  const auto dropped =
      inspectOnnx(buildOnnx(randomModel(R"({"id": "d", "op": "Dropout", "inputs": ["input"]},
                     {"id": "i", "op": "Identity", "inputs": ["d"]},
                     {"id": "r", "op": "ReLU", "inputs": ["i"]})"),
                            OnnxOptions{}));
  EXPECT_EQ(dropped.opTypes, std::vector<std::string>{"Relu"});
}

TEST(Export, UnexportableNodeIsRefusedByName) {
  const auto model = randomModel(R"({"id": "probs", "op": "Softmax", "inputs": ["input"]})");
  OnnxOptions o;
  o.opset = 11;
  try {
    buildOnnx(model, o);
    FAIL() << "opset 11 cannot express a channel softmax on an image";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node \"probs\""), std::string::npos) << what;
    EXPECT_NE(what.find("use --opset 13"), std::string::npos) << what;
  }
  o.opset = 9;
  EXPECT_THROW(buildOnnx(model, o), Error);
  // Dilated max pooling is valid ONNX, but OpenCV DNN cannot run it, so it is refused.
  try {
    buildOnnx(randomModel(R"({"id": "wide", "op": "MaxPool2d",
                              "params": {"kernel_size": 2, "dilation": 2}, "inputs": ["input"]})"),
              OnnxOptions{});
    FAIL() << "dilated MaxPool was exported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node \"wide\": MaxPool2d with dilation (2, 2)"),
              std::string::npos)
        << e.what();
  }
  // A node id PyTorch cannot use as a submodule name is refused by the code generator.
  EXPECT_THROW(
      generatePyTorch(randomModel(R"({"id": "training", "op": "ReLU", "inputs": ["input"]})")),
      Error);
}

// Resize at opsets 11 and 12 needs a roi input: the exporter writes one OpenCV DNN can read.
// ConvTranspose and Resize are what the file holds, with the weights in LibTorch's layout.
TEST(Export, UpsamplingLayersMatchInOpenCvAtEveryOpset) {
  const auto model = randomModel(
      R"({"id": "t", "op": "ConvTranspose2d", "params": {"out_channels": 4, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1}, "inputs": ["input"]},
      {"id": "near", "op": "Upsample", "params": {"scale_factor": 2}, "inputs": ["t"]},
      {"id": "blend", "op": "Upsample", "params": {"scale_factor": [1, 2], "mode": "bilinear"}, "inputs": ["near"]})",
      3, 5, 6);
  for (int opset : {11, 12, 13, 17}) {
    const auto report = parity(model, opset);
    EXPECT_TRUE(report.passed()) << "opset " << opset << ": " << report.summary();
  }
  OnnxOptions o;
  o.opset = 11;
  const auto info = inspectOnnx(buildOnnx(model, o));
  EXPECT_EQ(info.opTypes, (std::vector<std::string>{"ConvTranspose", "Resize", "Resize"}));
  EXPECT_EQ(info.initializers.at(0), "t.weight");
  EXPECT_EQ(info.initializers.at(1), "t.bias");
}

// A dilated transposed convolution is valid ONNX, but OpenCV DNN's Deconvolution has no
// dilation, so the export could not be verified: it is refused by name.
TEST(Export, DilatedConvTransposeIsRefusedByName) {
  try {
    buildOnnx(randomModel(R"({"id": "wide", "op": "ConvTranspose2d",
                              "params": {"out_channels": 2, "dilation": 2}, "inputs": ["input"]})"),
              OnnxOptions{});
    FAIL() << "a dilated ConvTranspose2d was exported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node \"wide\": ConvTranspose2d with dilation (2, 2) "
                                         "cannot be verified"),
              std::string::npos)
        << e.what();
  }
}

TEST(Export, AFailedParityKeepsNoFileUnlessAsked) {
  TempDir dir;
  const auto registry = ExporterRegistry::withBuiltins();
  EXPECT_EQ(registry.names(),
            (std::vector<std::string>{"onnx", "onnx-int8", "safetensors", "pytorch"}));
  auto model = randomModel(
      R"({"id": "c", "op": "Conv2d", "params": {"out_channels": 2}, "inputs": ["input"]})");
  ExportRequest request;
  request.path = dir.file("good.onnx");
  const auto ok = registry.find("onnx")->run(model, request);
  EXPECT_TRUE(ok.verified) << ok.message;
  EXPECT_TRUE(ok.written);
  EXPECT_TRUE(std::filesystem::exists(request.path));

  // Plant a disagreement: the file gets weights that differ from the module LibTorch runs.
  for (auto& [name, t] : model.weights)
    t = t.clone() + 0.01;
  request.path = dir.file("bad.onnx");
  const auto bad = registry.find("onnx")->run(model, request);
  EXPECT_FALSE(bad.verified);
  EXPECT_FALSE(bad.written);
  EXPECT_FALSE(std::filesystem::exists(request.path));
  EXPECT_NE(bad.message.find("parity FAILED"), std::string::npos) << bad.message;
  request.keepFailed = true;
  const auto kept = registry.find("onnx")->run(model, request);
  EXPECT_FALSE(kept.verified);
  EXPECT_TRUE(kept.written);
  EXPECT_TRUE(std::filesystem::exists(request.path));
  // Nothing else (no temporary file) is left in the folder.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST(Export, SafetensorsReadBackEqual) {
  TempDir dir;
  const auto model = randomModel(
      R"({"id": "c", "op": "Conv2d", "params": {"out_channels": 2}, "inputs": ["input"]},
      {"id": "bn", "op": "BatchNorm2d", "inputs": ["c"]})");
  ExportRequest request;
  request.path = dir.file("w.safetensors");
  const auto r = ExporterRegistry::withBuiltins().find("safetensors")->run(model, request);
  EXPECT_TRUE(r.verified) << r.message;
  const auto file = checkpoint::readSafetensors(request.path);
  EXPECT_EQ(file.metadata.at("format"), "pt");
  EXPECT_EQ(file.metadata.at("classes"), R"(["a","b"])");
  std::vector<std::string> names;
  for (const auto& [name, t] : file.tensors)
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"c.weight", "c.bias", "bn.weight", "bn.bias",
                                             "bn.running_mean", "bn.running_var",
                                             "bn.num_batches_tracked"}));
}

// model.py run by the system's Python: loads the weights with strict=True and matches LibTorch.
// Names from a project someone else wrote reach the generated model.py only as data: a project
// name, a source path and class names built to break out of a docstring or a string literal are
// read back exactly, and nothing they carry runs.
TEST(Export, HostileNamesInTheGeneratedPythonStayData) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "SKIPPED: /usr/bin/python3 has no torch (install python3-torch to run this)";
  }
  TempDir dir;
  const std::string marker = dir.file("PWNED");
  const std::string payload = "import os; os.system('touch " + marker + "')";
  auto model = randomModel(R"({"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["flat"]})");
  model.project.name = "x\"\"\"\n" + payload + "\n\"\"\"";
  model.source = "/tmp/a'''" + payload + "\\\n#";
  model.classes = {"cat\"]\n" + payload + "\n#", "dog\\", std::string("bad\xff\xfeutf8")};
  const auto registry = ExporterRegistry::withBuiltins();
  ExportRequest request;
  request.path = dir.file("model.py");
  registry.find("pytorch")->run(model, request);
  std::ofstream(dir.file("run.py"))
      << "import json, sys\nsys.path.insert(0, sys.argv[1])\nimport model as m\n"
         "print(json.dumps([m.PROJECT_NAME, m.SOURCE, m.CLASSES]))\n";
  const std::string cmd = "/usr/bin/python3 " + dir.file("run.py") + " " + dir.path().string() +
                          " > " + dir.file("out.txt") + " 2> " + dir.file("err.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << readTextFile(dir.file("err.txt"));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the generated file ran a payload";
  const Json back = Json::parse(readTextFile(dir.file("out.txt")));
  EXPECT_EQ(back[0], model.project.name);
  EXPECT_EQ(back[1], model.source);
  EXPECT_EQ(back[2][0], model.classes[0]);
  EXPECT_EQ(back[2][1], model.classes[1]);
  EXPECT_EQ(back[2][2], "bad\xef\xbf\xbd\xef\xbf\xbdutf8");  // invalid bytes: U+FFFD
}

TEST(Export, GeneratedPyTorchMatchesLibTorch) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "SKIPPED: /usr/bin/python3 has no torch (install python3-torch to run this)";
  }
  TempDir dir;
  const auto model = randomModel(
      CONV("conv1", R"({"out_channels": 4, "kernel_size": 4, "padding": "same"})", "input") R"(,
      {"id": "bn", "op": "BatchNorm2d", "inputs": ["conv1"]},
      {"id": "for", "op": "GELU", "inputs": ["bn"]},
      {"id": "class", "op": "Conv2d", "params": {"out_channels": 4, "kernel_size": 1}, "inputs": ["for"]},
      {"id": "sum", "op": "Add", "inputs": ["class", "for"]},
      {"id": "cat", "op": "Concat", "inputs": ["sum", "input"]},
      {"id": "pool", "op": "MaxPool2d", "params": {"kernel_size": 3, "stride": 2, "ceil_mode": true}, "inputs": ["cat"]},
      {"id": "avg", "op": "AvgPool2d", "params": {"kernel_size": 2}, "inputs": ["pool"]},
      {"id": "near", "op": "Upsample", "params": {"scale_factor": [2, 3]}, "inputs": ["avg"]},
      {"id": "deconv", "op": "ConvTranspose2d", "params": {"out_channels": 5, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1}, "inputs": ["near"]},
      {"id": "blend", "op": "Upsample", "params": {"scale_factor": 2, "mode": "bilinear"}, "inputs": ["deconv"]},
      {"id": "gap", "op": "GlobalAvgPool", "inputs": ["blend"]},
      {"id": "flat", "op": "Flatten", "inputs": ["gap"]},
      {"id": "drop", "op": "Dropout", "inputs": ["flat"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 3}, "inputs": ["drop"]},
      {"id": "act", "op": "SiLU", "inputs": ["fc"]})");
  torch::manual_seed(5);
  const auto x = torch::randn({3, 3, 12, 12});
  testutil::writeForPyTorch(model, dir, x);
  const auto expected = model.forward(x);
  const std::string out =
      testutil::runWithPyTorch(dir,
                               "with torch.no_grad():\n    y = net(x)\n"
                               "print(' '.join(repr(float(v)) for v in y.flatten()))\n");
  if (HasFailure()) return;
  std::istringstream in(out);
  const auto ref = expected.flatten();
  for (std::int64_t i = 0; i < ref.numel(); ++i) {
    double v = 0;
    ASSERT_TRUE(in >> v) << out;
    EXPECT_NEAR(v, ref[i].item<double>(), 1e-5) << "output " << i;
  }
  const std::string py = readTextFile(dir.file("model.py"));
  EXPECT_NE(
      py.find("self.conv1 = nn.Conv2d(3, 4, kernel_size=(4, 4), stride=(1, 1), padding='same'"),
      std::string::npos)
      << py;
  EXPECT_NE(py.find("self.add_module(\"for\", nn.GELU(approximate='none'))"), std::string::npos)
      << py;
  EXPECT_NE(py.find("self.deconv = nn.ConvTranspose2d(7, 5, kernel_size=(3, 3), stride=(2, 2), "
                    "padding=(1, 1), output_padding=(1, 1), groups=1, bias=True, "
                    "dilation=(1, 1))"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("self.near = nn.Upsample(scale_factor=(2, 3), mode='nearest')"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("self.blend = nn.Upsample(scale_factor=(2, 2), mode='bilinear', "
                    "align_corners=False)"),
            std::string::npos)
      << py;
}

// OpenCV DNN 4.6 runs a Mul of a gate and a feature map only for a batch of one: the parity
// check then feeds the samples one at a time, and its report says so instead of "random x7".
TEST(Export, AParityCheckRunOneSampleAtATimeSaysSo) {
  const auto model = randomModel(R"({"id": "g", "op": "GlobalAvgPool", "inputs": ["input"]},
      {"id": "s", "op": "Sigmoid", "inputs": ["g"]},
      {"id": "m", "op": "Mul", "inputs": ["input", "s"]})");
  const auto report = parity(model);
  EXPECT_TRUE(report.passed()) << report.summary();
  ASSERT_FALSE(report.batches.empty());
  EXPECT_EQ(report.batches[0],
            "random x7 (7 samples one at a time: a batch of 2 or more with Mul does not run in "
            "OpenCV DNN 4.6)");
  EXPECT_EQ(report.batches[1], "random x1");
}

// A detector's ONNX file with the decoder: OpenCV DNN's "boxes" and "scores" against
// task/detection_head.h's decoding written out here over LibTorch's raw output (not the
// exporter's code). With NMS the file also holds a NonMaxSuppression, which OpenCV DNN 4.6
// cannot run: the exporter runs the rest of the graph there and onnx::checker checks the node.
TEST(Export, DetectionDecoderOutputsMatchTheHeadDecodedByHand) {
  // 1x32x32 -> 8x8x8 (stride 4) -> 7 channels: 2 class logits, 4 distances, 1 centre-ness.
  auto model = randomModel(
      CONV("c1", R"({"out_channels": 8, "kernel_size": 3, "stride": 4, "padding": 1})", "input") R"(,
      {"id": "act", "op": "ReLU", "inputs": ["c1"]}, )" CONV(
          "pred", R"({"out_channels": 7, "kernel_size": 1})", "act"),
      1, 32, 32);
  OnnxOptions o;
  o.output = "head";
  o.decoder.enabled = true;
  const std::string bytes = buildOnnx(model, o);  // onnx::checker runs in it
  EXPECT_EQ(inspectOnnx(bytes).outputs, (std::vector<std::string>{"head", "boxes", "scores"}));

  torch::manual_seed(4);
  const auto x = (torch::randn({5, 1, 32, 32}) * 3).contiguous();  // large enough to clip
  cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  std::vector<int> dims{5, 1, 32, 32};
  net.setInput(cv::Mat(4, dims.data(), CV_32F, x.data_ptr<float>()).clone(), "input");
  std::vector<cv::Mat> outs;
  net.forward(outs, std::vector<std::string>{"boxes", "scores"});
  ASSERT_EQ(outs.size(), 2u);
  ASSERT_EQ(outs[0].total(), std::size_t(5 * 64 * 4));
  ASSERT_EQ(outs[1].total(), std::size_t(5 * 2 * 64));
  const float* boxes = outs[0].ptr<float>();   // N x L x 4, L = 8 x 8 row-major
  const float* scores = outs[1].ptr<float>();  // N x K x L
  const auto head = model.forward(x).contiguous();
  ASSERT_EQ(std::vector<std::int64_t>(head.sizes().begin(), head.sizes().end()),
            (std::vector<std::int64_t>{5, 7, 8, 8}));
  const auto at = head.accessor<float, 4>();
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  const auto worst = [](double& most, double diff) {  // NaN is the worst
    if (!(diff <= most)) most = diff;
  };
  double boxDiff = 0, scoreDiff = 0;
  int edges = 0;
  for (int n = 0; n < 5; ++n) {
    for (int i = 0; i < 8; ++i) {    // row
      for (int j = 0; j < 8; ++j) {  // column
        const int loc = i * 8 + j;
        const double px = (j + 0.5) * 4, py = (i + 0.5) * 4;
        double d[4];  // left, top, right, bottom: exp(min(raw, 10)) x stride
        for (int c = 0; c < 4; ++c)
          d[c] = std::exp(std::min<double>(at[n][2 + c][i][j], 10)) * 4;
        const double want[4] = {std::clamp(px - d[0], 0.0, 32.0), std::clamp(py - d[1], 0.0, 32.0),
                                std::clamp(px + d[2], 0.0, 32.0), std::clamp(py + d[3], 0.0, 32.0)};
        for (int c = 0; c < 4; ++c) {
          worst(boxDiff, std::abs(boxes[(n * 64 + loc) * 4 + c] - want[c]));
          edges += want[c] == 0.0 || want[c] == 32.0;
        }
        for (int k = 0; k < 2; ++k) {
          const double score = std::sqrt(sigmoid(at[n][k][i][j]) * sigmoid(at[n][6][i][j]));
          worst(scoreDiff, std::abs(scores[(n * 2 + k) * 64 + loc] - score));
        }
      }
    }
  }
  EXPECT_LT(boxDiff, 1e-3);
  EXPECT_LT(scoreDiff, 1e-4);
  EXPECT_GT(edges, 0) << "no box reached the input's edge: the clipping went untested";
  const auto report =
      checkOnnxParity(bytes, model, randomParityBatches(model), 1e-4, "head", /*decoder=*/true);
  EXPECT_TRUE(report.passed()) << report.summary();
  EXPECT_NE(report.summary().find("decoder: boxes max abs diff"), std::string::npos)
      << report.summary();

  // With NMS, through the exporter: verified (OpenCV DNN runs the graph without the NMS node)
  // and written with it.
  TempDir dir;
  ExportRequest request;
  request.path = dir.file("detector.onnx");
  request.task = "detection";
  request.notes = task::detectionExportNotes();
  request.onnx.decoder.enabled = true;
  request.onnx.decoder.nms = true;
  const auto r = ExporterRegistry::withBuiltins().find("onnx")->run(model, request);
  EXPECT_TRUE(r.verified) << r.message;
  ASSERT_TRUE(r.written) << r.message;
  // ONNX Runtime runs the written file whole, its NonMaxSuppression too.
  if (testutil::onnxRuntimeForTest()) {
    ASSERT_TRUE(r.runtimeParity) << r.message;
    EXPECT_TRUE(r.runtimeParity->passed()) << r.runtimeParity->summary();
    EXPECT_TRUE(r.runtimeParity->decoder);
    EXPECT_GT(r.runtimeParity->selectedRows, 0) << r.runtimeParity->summary();
  }
  const auto info = inspectOnnx(readTextFile(request.path));
  EXPECT_EQ(info.outputs, (std::vector<std::string>{"head", "boxes", "scores", "selected"}));
  EXPECT_NE(std::find(info.opTypes.begin(), info.opTypes.end(), "NonMaxSuppression"),
            info.opTypes.end());
  std::map<std::string, std::string> meta(info.metadata.begin(), info.metadata.end());
  EXPECT_NE(meta["decoder"].find("selected: num x 3"), std::string::npos) << meta["decoder"];

  // A model whose output is no detection head is refused.
  OnnxOptions classifier;
  classifier.decoder.enabled = true;
  EXPECT_THROW(buildOnnx(randomModel(R"({"id": "f", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["f"]})"),
                         classifier),
               Error);
  // model.py of a detection project decodes with the model's stride and classes.
  model.project.task = "detection";
  EXPECT_NE(generatePyTorch(model, true)
                .find("def decode(head, stride=4, classes=2, "
                      "score_threshold=0.05, nms_iou=0.6,"),
            std::string::npos);
}
