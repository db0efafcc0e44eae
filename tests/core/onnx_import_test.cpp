// ONNX import: torchvision's ResNet-18, MobileNetV2, MobileNetV3-Small and EfficientNet-B0
// (random weights, exported by Debian's python3-torchvision with BatchNorm fused and kept)
// import into Netsmith graphs whose forward output equals torchvision's on the same batch,
// with torchvision's parameter counts; the imported graphs export to ONNX again and match in
// OpenCV DNN; a decoder of ConvTranspose and Resize matches PyTorch at opsets 11 to 17 and
// Netsmith's own export of it round-trips; unsupported ops and forms are listed by name and
// bad files refused with their reason.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "data_fixtures.h"
#include "export/exporter.h"
#include "graph/graph_analysis.h"
#include "graph/graph_module.h"
#include "import/onnx_import.h"
#include "test_support.h"

using namespace netsmith;
using netsmith::testutil::TempDir;

namespace onnx_import_test {

struct Exported {
  std::string name;
  std::int64_t torchvisionParams = 0;
};

/// Exports the four networks (and two small refused ones) once for the whole suite.
class OnnxImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torchvision' >/dev/null 2>&1") != 0) return;
    dir_ = new TempDir();
    const std::string script = dir_->file("export.py");
    std::ofstream(script) << R"(import sys, torch, torchvision
out = sys.argv[1]
torch.manual_seed(0)
x = torch.randn(2, 3, 64, 64)
x.numpy().tofile(out + '/x.bin')
nets = {'resnet18': torchvision.models.resnet18, 'mobilenet_v2': torchvision.models.mobilenet_v2,
        'mobilenet_v3_small': torchvision.models.mobilenet_v3_small,
        'efficientnet_b0': torchvision.models.efficientnet_b0}
for name, make in nets.items():
    torch.manual_seed(1)
    m = make(num_classes=10).eval()
    # BatchNorm statistics that are not the identity, so that they matter
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)
    with torch.no_grad():
        m(x).numpy().tofile(out + '/' + name + '.y.bin')
    for mode in ('fused', 'bn'):
        kw = dict(opset_version=13, input_names=['x'], output_names=['y'])
        if mode == 'bn':
            kw.update(do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
        torch.onnx.export(m, x, out + '/' + name + '_' + mode + '.onnx', **kw)
    if name == 'mobilenet_v3_small':  # the opset range's ends: Clip bounds, HardSwish, axes
        for opset in (11, 17):
            torch.onnx.export(m, x, out + '/' + name + '_opset%d.onnx' % opset,
                              opset_version=opset, input_names=['x'], output_names=['y'])
    print(name, sum(p.numel() for p in m.parameters()))
# asymmetric padding: a convolution whose pads ONNX gives as [top, left, bottom, right] =
# [0, 0, 1, 1] (TensorFlow's SAME at stride 2), and a ZeroPad2d (an ONNX Pad)
import onnx
conv = torch.nn.Conv2d(3, 4, 3, stride=2).eval()
torch.onnx.export(conv, x, out + '/asym.onnx', opset_version=13, input_names=['x'], output_names=['y'])
model = onnx.load(out + '/asym.onnx')
for node in model.graph.node:
    if node.op_type == 'Conv':
        for a in node.attribute:
            if a.name == 'pads':
                del a.ints[:]
                a.ints.extend([0, 0, 1, 1])
onnx.save(model, out + '/asym.onnx')
with torch.no_grad():
    conv(torch.nn.functional.pad(x, (0, 1, 0, 1))).numpy().tofile(out + '/asym.y.bin')
    padded = torch.nn.Sequential(torch.nn.ZeroPad2d((2, 0, 1, 3)), torch.nn.Conv2d(3, 2, 3)).eval()
    padded(x).numpy().tofile(out + '/pad.y.bin')
# torch.onnx writes ZeroPad2d as a subgraph that computes the pads: the plain Pad form by hand
from onnx import helper, numpy_helper, TensorProto
w, b = padded[1].weight.detach().numpy(), padded[1].bias.detach().numpy()
graph = helper.make_graph(
    [helper.make_node('Pad', ['x', 'pads'], ['p'], name='pad'),
     helper.make_node('Conv', ['p', 'w', 'b'], ['y'], name='conv', kernel_shape=[3, 3])],
    'pad', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 64, 64])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 2, 66, 64])],
    [numpy_helper.from_array(__import__('numpy').array([0, 0, 1, 2, 0, 0, 3, 0], dtype='int64'), 'pads'),
     numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b')])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)]), out + '/pad.onnx')
# upsampling as torch.onnx writes it: ConvTranspose (groups, output_padding, no bias) and Resize
# (nearest with a scale per axis, bilinear), at the opset range's ends and in the middle
class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.up1 = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.near = torch.nn.Upsample(scale_factor=(2, 3), mode='nearest')
        self.up2 = torch.nn.ConvTranspose2d(6, 3, 2, stride=2, bias=False)
        self.blend = torch.nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
    def forward(self, x):
        return self.blend(self.up2(self.near(self.up1(torch.relu(self.conv(x))))))
torch.manual_seed(2)
decoder = Decoder().eval()
xd = torch.randn(2, 3, 8, 8)
xd.numpy().tofile(out + '/decoder.x.bin')
with torch.no_grad():
    decoder(xd).numpy().tofile(out + '/decoder.y.bin')
for opset in (11, 13, 17):
    torch.onnx.export(decoder, xd, out + '/decoder_opset%d.onnx' % opset, opset_version=opset,
                      input_names=['x'], output_names=['y'])
# refused: an upsampling by a fraction (Resize) and an LSTM
class Up(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.up = torch.nn.Upsample(scale_factor=1.5)
        self.fc = torch.nn.Linear(4 * 9 * 9, 10)
    def forward(self, x):
        return self.fc(torch.flatten(self.up(self.conv(x)), 1))
torch.onnx.export(Up().eval(), torch.randn(1, 3, 8, 8), out + '/upsample.onnx', opset_version=13)
class Rnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 4, batch_first=True)
    def forward(self, x):
        return self.lstm(x[:, 0])[0][:, -1]
torch.onnx.export(Rnn().eval(), torch.randn(1, 1, 8, 8), out + '/lstm.onnx', opset_version=13)
)";
    const std::string cmd = "/usr/bin/python3 " + script + " " + dir_->path().string() + " > " +
                            dir_->file("params.txt") + " 2> " + dir_->file("err.txt");
    if (std::system(cmd.c_str()) != 0) {
      failure_ = readTextFile(dir_->file("err.txt"));
      return;
    }
    std::ifstream params(dir_->file("params.txt"));
    Exported e;
    while (params >> e.name >> e.torchvisionParams)
      nets_.push_back(e);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!dir_) GTEST_SKIP() << "SKIPPED: /usr/bin/python3 has no torchvision (python3-torchvision)";
    ASSERT_TRUE(failure_.empty()) << failure_;
    ASSERT_EQ(nets_.size(), 4u);
  }

  static torch::Tensor readFloats(const std::string& path, std::vector<std::int64_t> shape) {
    std::ifstream in(path, std::ios::binary);
    std::int64_t n = 1;
    for (auto d : shape)
      n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * 4));
    EXPECT_TRUE(in.good()) << path;
    return torch::from_blob(v.data(), shape, torch::kFloat32).clone();
  }

  /// The imported model with every weight loaded (or the test fails), in eval mode.
  static graph::GraphModule loadedModule(const import::ImportResult& r,
                                         const ops::OpRegistry& registry) {
    graph::GraphModule module(r.model, registry);
    const auto report = checkpoint::loadModuleState(*module, r.weights);
    EXPECT_TRUE(report.complete()) << report.summary();
    module->eval();
    return module;
  }

  static TempDir* dir_;
  static std::vector<Exported> nets_;
  static std::string failure_;
};

TempDir* OnnxImport::dir_ = nullptr;
std::vector<Exported> OnnxImport::nets_;
std::string OnnxImport::failure_;

}  // namespace onnx_import_test

using onnx_import_test::OnnxImport;

TEST_F(OnnxImport, TorchvisionNetworksMatchTorchvisionAndExportAgain) {
  const auto& registry = ops::OpRegistry::withBuiltins();
  const auto x = readFloats(dir_->file("x.bin"), {2, 3, 64, 64});
  for (const auto& net : nets_) {
    const auto expected = readFloats(dir_->file(net.name + ".y.bin"), {2, 10});
    for (const std::string mode : {"fused", "bn"}) {
      SCOPED_TRACE(net.name + " " + mode);
      const auto r = import::importOnnx(dir_->file(net.name + "_" + mode + ".onnx"), {}, registry);
      EXPECT_EQ(r.model.input, (graph::InputSpec{3, 64, 64}));
      EXPECT_EQ(r.outputs, 10);
      const auto analysis = graph::analyseGraph(r.model, registry);
      ASSERT_TRUE(analysis.ok()) << formatProblems(analysis.problems);
      std::int64_t params = 0;
      for (const auto& n : analysis.nodes)
        params += n.paramCount;
      // With BatchNorm kept, every torchvision parameter has its place; fused, BatchNorm's
      // scale and shift are folded into the convolutions (fewer, never more).
      if (mode == "bn")
        EXPECT_EQ(params, net.torchvisionParams);
      else
        EXPECT_LT(params, net.torchvisionParams);
      auto module = loadedModule(r, registry);
      torch::NoGradGuard noGrad;
      const auto y = module->forward(x);
      const double diff = (y - expected).abs().max().item<double>();
      EXPECT_LT(diff, 1e-4) << "max abs difference from torchvision";

      // The imported graph exports to ONNX again and runs in OpenCV DNN like LibTorch.
      project::Project p;
      p.name = net.name;
      p.model = r.model;
      auto shared = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
      auto m = exporting::exportModelFrom(p, std::move(module), shared);
      exporting::OnnxOptions o;
      o.opset = 13;
      const auto bytes = exporting::buildOnnx(m, o);
      if (const char* keep = std::getenv("NETSMITH_KEEP_ONNX"))
        writeFileAtomically(std::string(keep) + "/" + net.name + "_" + mode + ".onnx", bytes);
      try {
        const auto parity = exporting::checkOnnxParity(bytes, m, exporting::randomParityBatches(m));
        EXPECT_TRUE(parity.passed()) << parity.summary();
      } catch (const Error& e) {
        ADD_FAILURE() << "OpenCV DNN: " << e.what();
      }
      if (const auto ort = testutil::onnxRuntimeForTest()) {
        const auto parity =
            exporting::checkOnnxRuntimeParity(*ort, bytes, m, exporting::randomParityBatches(m));
        EXPECT_TRUE(parity.passed()) << parity.summary();
      }
    }
  }
}

TEST_F(OnnxImport, OpsetsElevenAndSeventeenImportAlike) {
  const auto& registry = ops::OpRegistry::withBuiltins();
  const auto x = readFloats(dir_->file("x.bin"), {2, 3, 64, 64});
  const auto expected = readFloats(dir_->file("mobilenet_v3_small.y.bin"), {2, 10});
  for (const int opset : {11, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const auto r = import::importOnnx(
        dir_->file("mobilenet_v3_small_opset" + std::to_string(opset) + ".onnx"), {}, registry);
    EXPECT_EQ(r.opset, opset);
    auto module = loadedModule(r, registry);
    torch::NoGradGuard noGrad;
    EXPECT_LT((module->forward(x) - expected).abs().max().item<double>(), 1e-4);
  }
}

TEST_F(OnnxImport, AsymmetricPaddingImportsAsZeroPad2d) {
  const auto& registry = ops::OpRegistry::withBuiltins();
  const auto x = readFloats(dir_->file("x.bin"), {2, 3, 64, 64});
  for (const auto& [file, shape] :
       {std::pair<std::string, std::vector<std::int64_t>>{"asym", {2, 4, 32, 32}},
        {"pad", {2, 2, 66, 64}}}) {
    SCOPED_TRACE(file);
    const auto r = import::importOnnx(dir_->file(file + ".onnx"), {}, registry);
    int pads = 0;
    for (const auto& n : r.model.nodes)
      pads += n.op == "ZeroPad2d";
    EXPECT_EQ(pads, 1);
    auto module = loadedModule(r, registry);
    torch::NoGradGuard noGrad;
    const auto y = module->forward(x);
    ASSERT_EQ(y.sizes().vec(), shape);
    EXPECT_LT((y - readFloats(dir_->file(file + ".y.bin"), shape)).abs().max().item<double>(),
              1e-4);
  }
}

// torch.onnx's ConvTranspose and Resize (nearest and bilinear, from nn.Upsample) import as
// ConvTranspose2d and Upsample nodes whose output equals PyTorch's at opsets 11, 13 and 17.
TEST_F(OnnxImport, DecoderLayersMatchPyTorchAtEveryOpset) {
  const auto& registry = ops::OpRegistry::withBuiltins();
  const auto x = readFloats(dir_->file("decoder.x.bin"), {2, 3, 8, 8});
  // 8x8 -> 16x16 (up1) -> 32x48 (near) -> 64x96 (up2) -> 128x192 (blend)
  const std::vector<std::int64_t> shape{2, 3, 128, 192};
  const auto expected = readFloats(dir_->file("decoder.y.bin"), shape);
  for (const int opset : {11, 13, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const auto r = import::importOnnx(dir_->file("decoder_opset" + std::to_string(opset) + ".onnx"),
                                      {}, registry);
    std::map<std::string, int> count;
    for (const auto& n : r.model.nodes)
      ++count[n.op];
    EXPECT_EQ(count["ConvTranspose2d"], 2);
    EXPECT_EQ(count["Upsample"], 2);
    auto module = loadedModule(r, registry);
    torch::NoGradGuard noGrad;
    const auto y = module->forward(x);
    ASSERT_EQ(y.sizes().vec(), shape);
    EXPECT_LT((y - expected).abs().max().item<double>(), 1e-4);
  }
}

TEST_F(OnnxImport, UnsupportedOpsAreListedByNameAndNothingIsWritten) {
  const auto& registry = ops::OpRegistry::withBuiltins();
  for (const auto& [file, op] : {std::pair<std::string, std::string>{"upsample.onnx", "(Resize)"},
                                 {"lstm.onnx", "(LSTM)"}}) {
    try {
      import::importOnnx(dir_->file(file), {}, registry);
      ADD_FAILURE() << file << " was imported";
    } catch (const import::UnsupportedOps& e) {
      ASSERT_FALSE(e.nodes.empty());
      EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("nothing was written"), std::string::npos);
    }
  }
}

// A FIFO given as the model is refused by name before it is opened: opening it would block
// until something wrote to it (`import pipe.onnx` hung for ever).
TEST(OnnxImportInput, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("pipe.onnx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto& registry = ops::OpRegistry::withBuiltins();
  try {
    import::importOnnx(fifo, {}, registry);
    ADD_FAILURE() << "a FIFO was read as a model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pipe.onnx: is a FIFO"), std::string::npos) << e.what();
  }
}

namespace onnx_import_test {

using netsmith::import::OnnxAttribute;
using netsmith::import::OnnxGraph;
using netsmith::import::OnnxNode;
using netsmith::import::OnnxTensor;

OnnxAttribute textAttribute(const std::string& s) {
  OnnxAttribute a;
  a.kind = OnnxAttribute::Kind::String;
  a.s = s;
  return a;
}

OnnxAttribute intsAttribute(std::vector<std::int64_t> v) {
  OnnxAttribute a;
  a.kind = OnnxAttribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

/// A graph of one node reading "x" (1 x 2 x 4 x 4) and writing "y", with constants.
OnnxGraph oneNodeGraph(OnnxNode node, const std::vector<OnnxTensor>& constants) {
  OnnxGraph g;
  g.opset = 13;
  g.inputs.push_back({"x", {1, 2, 4, 4}});
  g.outputs = {"y"};
  node.outputs = {"y"};
  g.nodes.push_back(std::move(node));
  for (const auto& t : constants)
    g.constants[t.name] = std::make_shared<OnnxTensor>(t);
  return g;
}

OnnxTensor floatTensor(const std::string& name, std::vector<float> values) {
  OnnxTensor t;
  t.name = name;
  t.dims = {static_cast<std::int64_t>(values.size())};
  t.floats = std::move(values);
  return t;
}

OnnxTensor intTensor(const std::string& name, std::vector<std::int64_t> values) {
  OnnxTensor t;
  t.name = name;
  t.isFloat = false;
  t.dims = {static_cast<std::int64_t>(values.size())};
  t.ints = std::move(values);
  return t;
}

/// A Resize of "x" named "up" with the given attributes and inputs after x.
OnnxNode resizeNode(std::map<std::string, OnnxAttribute> attributes,
                    std::vector<std::string> moreInputs) {
  OnnxNode n;
  n.name = "up";
  n.opType = "Resize";
  n.inputs = {"x"};
  n.inputs.insert(n.inputs.end(), moreInputs.begin(), moreInputs.end());
  n.attributes = std::move(attributes);
  return n;
}

/// What importing `g` refuses: its one line, or "(imported)".
std::string refusalOf(const OnnxGraph& g, const ops::OpRegistry& registry) {
  try {
    import::importOnnxGraph(g, "t.onnx", {}, registry);
  } catch (const import::UnsupportedOps& e) {
    return e.nodes.empty() ? std::string("(no node)") : e.nodes[0];
  }
  return "(imported)";
}

}  // namespace onnx_import_test

// Resize imports only in the forms nn.Upsample exports (and Netsmith writes): nearest as
// floor(x / scale), linear with half-pixel centres, whole scales from constants (or constant
// sizes that are whole multiples); any other form is refused naming the node and the setting.
TEST(OnnxImportResize, NnUpsampleFormsImportAndOthersAreRefusedByName) {
  using namespace onnx_import_test;
  const auto registry = ops::OpRegistry::withBuiltins();
  const auto scales = floatTensor("scales", {1, 1, 2, 3});
  const std::map<std::string, OnnxAttribute> nearest{
      {"mode", textAttribute("nearest")},
      {"coordinate_transformation_mode", textAttribute("asymmetric")},
      {"nearest_mode", textAttribute("floor")}};

  // torch.onnx's nearest (opset 13: no roi) and linear (half_pixel, the default).
  auto r = import::importOnnxGraph(oneNodeGraph(resizeNode(nearest, {"", "scales"}), {scales}),
                                   "t.onnx", {}, registry);
  ASSERT_EQ(r.model.nodes.size(), 2u);
  EXPECT_EQ(r.model.nodes[1].op, "Upsample");
  EXPECT_EQ(r.model.nodes[1].params.at("scale_factor"), Json::array({2, 3}));
  EXPECT_EQ(r.model.nodes[1].params.at("mode"), Json("nearest"));
  r = import::importOnnxGraph(
      oneNodeGraph(resizeNode({{"mode", textAttribute("linear")}}, {"", "scales"}), {scales}),
      "t.onnx", {}, registry);
  EXPECT_EQ(r.model.nodes[1].params.at("mode"), Json("bilinear"));
  // Constant sizes that are whole multiples of the input (1 x 2 x 4 x 4).
  r = import::importOnnxGraph(
      oneNodeGraph(resizeNode(nearest, {"", "", "sizes"}), {intTensor("sizes", {1, 2, 8, 12})}),
      "t.onnx", {}, registry);
  EXPECT_EQ(r.model.nodes[1].params.at("scale_factor"), Json::array({2, 3}));

  auto other = nearest;
  other["coordinate_transformation_mode"] = textAttribute("half_pixel");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode(other, {"", "scales"}), {scales}), registry),
            "\"up\" (Resize): coordinate_transformation_mode \"half_pixel\" with mode nearest "
            "(only \"asymmetric\" with nearest_mode \"floor\", PyTorch's nearest)");
  other = nearest;
  other.erase("nearest_mode");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode(other, {"", "scales"}), {scales}), registry),
            "\"up\" (Resize): nearest_mode \"round_prefer_floor\" (only \"floor\", PyTorch's "
            "nearest)");
  EXPECT_EQ(
      refusalOf(oneNodeGraph(
                    resizeNode({{"mode", textAttribute("linear")},
                                {"coordinate_transformation_mode", textAttribute("align_corners")}},
                               {"", "scales"}),
                    {scales}),
                registry),
      "\"up\" (Resize): coordinate_transformation_mode \"align_corners\" with mode linear (only "
      "\"half_pixel\" or \"pytorch_half_pixel\", PyTorch's bilinear with align_corners=False)");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode({{"mode", textAttribute("cubic")}}, {"", "scales"}),
                                   {scales}),
                      registry),
            "\"up\" (Resize): mode \"cubic\" (only nearest and linear, as nn.Upsample)");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode(nearest, {"", "scales"}),
                                   {floatTensor("scales", {1, 1, 1.5f, 2})}),
                      registry),
            "\"up\" (Resize): a scale of 1.5 on H (only whole numbers from 1 to 32)");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode(nearest, {"", "scales"}),
                                   {floatTensor("scales", {1, 2, 2, 2})}),
                      registry),
            "\"up\" (Resize): scales [1.0,2.0,2.0,2.0] that resize the batch or the channels");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode(nearest, {"", "", "sizes"}),
                                   {intTensor("sizes", {1, 2, 6, 12})}),
                      registry),
            "\"up\" (Resize): sizes [1,2,6,12] that do not scale the input 2x4x4 by whole "
            "numbers from 1 to 32 on H");
  EXPECT_EQ(refusalOf(oneNodeGraph(resizeNode(nearest, {"", "computed"}), {}), registry),
            "\"up\" (Resize): scales that are not a constant");
}

// ConvTranspose imports with its weights; output_shape only when it is the size the pads give,
// and auto_pad only as NOTSET.
TEST(OnnxImportConvTranspose, OutputShapeMustAgreeAndAutoPadIsRefused) {
  using namespace onnx_import_test;
  const auto registry = ops::OpRegistry::withBuiltins();
  OnnxTensor w;
  w.name = "w";
  w.dims = {2, 3, 3, 3};  // C_in x C_out x kH x kW
  w.floats.assign(2 * 3 * 3 * 3, 0.5f);
  const auto deconv = [&](std::map<std::string, OnnxAttribute> attributes) {
    OnnxNode n;
    n.name = "deconv";
    n.opType = "ConvTranspose";
    n.inputs = {"x", "w", "b"};
    n.attributes = std::move(attributes);
    n.attributes["strides"] = intsAttribute({2, 2});
    n.attributes["pads"] = intsAttribute({1, 1, 1, 1});
    n.attributes["output_padding"] = intsAttribute({1, 1});
    return oneNodeGraph(n, {w, floatTensor("b", {0.1f, 0.2f, 0.3f})});
  };
  // 4x4 at stride 2, pads 1, output_padding 1, kernel 3: 8x8.
  const auto r = import::importOnnxGraph(deconv({{"output_shape", intsAttribute({8, 8})}}),
                                         "t.onnx", {}, registry);
  ASSERT_EQ(r.model.nodes.size(), 2u);
  const auto& node = r.model.nodes[1];
  EXPECT_EQ(node.op, "ConvTranspose2d");
  EXPECT_EQ(node.params.at("out_channels"), Json(3));
  EXPECT_EQ(node.params.at("output_padding"), Json::array({1, 1}));
  ASSERT_EQ(r.weights.size(), 2u);
  EXPECT_EQ(r.weights[0].first, "deconv.weight");
  EXPECT_EQ(r.weights[0].second.sizes().vec(), (std::vector<std::int64_t>{2, 3, 3, 3}));
  EXPECT_EQ(r.weights[1].first, "deconv.bias");

  EXPECT_EQ(refusalOf(deconv({{"output_shape", intsAttribute({9, 9})}}), registry),
            "\"deconv\" (ConvTranspose): output_shape [9,9] other than the [8,8] its pads and "
            "output_padding give (only those are imported)");
  EXPECT_EQ(refusalOf(deconv({{"auto_pad", textAttribute("SAME_UPPER")}}), registry),
            "\"deconv\" (ConvTranspose): auto_pad SAME_UPPER (only explicit pads)");
}

// Netsmith's own export of the upsampling layers (Resize with a roi at opset 11, without from
// 13) imports back to the same layers and weights, computing the same function.
TEST(OnnxImportOwnExport, UpsamplingLayersRoundTrip) {
  auto loaded =
      testutil::parseModel(R"({"input": {"channels": 3, "height": 6, "width": 5}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "t", "op": "ConvTranspose2d", "params": {"out_channels": 4, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1}, "inputs": ["input"]},
      {"id": "near", "op": "Upsample", "params": {"scale_factor": [2, 3]}, "inputs": ["t"]},
      {"id": "g", "op": "ConvTranspose2d", "params": {"out_channels": 2, "groups": 2, "bias": false}, "inputs": ["near"]},
      {"id": "blend", "op": "Upsample", "params": {"scale_factor": 2, "mode": "bilinear"}, "inputs": ["g"]}]})");
  ASSERT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  auto registry = std::make_shared<ops::OpRegistry>(ops::OpRegistry::withBuiltins());
  torch::manual_seed(3);
  graph::GraphModule net(loaded.project.model, *registry);
  testutil::randomiseWeights(*net, 0.5, 0.3);
  const auto model = exporting::exportModelFrom(loaded.project, std::move(net), registry);
  const auto x = torch::randn({2, 3, 6, 5});
  const auto expected = model.forward(x);
  TempDir dir;
  for (const int opset : {11, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    exporting::OnnxOptions o;
    o.opset = opset;
    const std::string path = dir.file("own" + std::to_string(opset) + ".onnx");
    writeFileAtomically(path, exporting::buildOnnx(model, o));
    const auto r = import::importOnnx(path, {}, *registry);
    const auto* t = r.model.find("t");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->op, "ConvTranspose2d");
    EXPECT_EQ(t->params.at("output_padding"), Json::array({1, 1}));
    const auto* blend = r.model.find("blend");
    ASSERT_NE(blend, nullptr);
    EXPECT_EQ(blend->op, "Upsample");
    EXPECT_EQ(blend->params.at("mode"), Json("bilinear"));
    graph::GraphModule back(r.model, *registry);
    EXPECT_TRUE(checkpoint::loadModuleState(*back, r.weights).complete());
    back->eval();
    torch::NoGradGuard noGrad;
    EXPECT_LT((back->forward(x) - expected).abs().max().item<double>(), 1e-5);
  }
}
