// Property test: for every op, over many random parameter and input combinations, the shape
// that analysis infers equals the shape of the real LibTorch forward output, and the counted
// parameters equal the layer's real parameters.
#include <algorithm>
#include <cmath>
#include <random>

#include "ops/node_layer.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::ops;

namespace {

class Gen {
 public:
  explicit Gen(unsigned seed) : m_rng(seed) {}
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(m_rng);
  }
  double real(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(m_rng);
  }
  bool coin() { return integer(0, 1) == 1; }
  Json pairOrInt(std::int64_t lo, std::int64_t hi) {
    if (coin()) return integer(lo, hi);
    return Json::array({integer(lo, hi), integer(lo, hi)});
  }
  Shape image(std::int64_t maxC = 6, std::int64_t maxHw = 18) {
    return {integer(1, maxC), integer(1, maxHw), integer(1, maxHw)};
  }
  Shape anyShape() { return coin() ? image() : Shape{integer(1, 40)}; }

 private:
  std::mt19937 m_rng;
};

struct Case {
  std::vector<Shape> inputs;
  Json params;
};

// A random case for `op`. Parameters are drawn from their valid ranges; geometry may still not
// fit the input (the rule must then refuse it, and LibTorch must refuse it too).
Case randomCase(const std::string& op, Gen& g) {
  Case c;
  c.params = Json::object();
  if (op == "Input" || op == "Identity" || op == "Flatten" || op == "ReLU" || op == "SiLU" ||
      op == "Sigmoid" || op == "Tanh" || op == "Softmax" || op == "ReLU6" || op == "Hardsigmoid" ||
      op == "Hardswish") {
    c.inputs = {g.anyShape()};
  } else if (op == "LeakyReLU") {
    c.inputs = {g.anyShape()};
    c.params["negative_slope"] = g.real(0, 0.5);
  } else if (op == "GELU") {
    c.inputs = {g.anyShape()};
    c.params["approximate"] = g.coin() ? "none" : "tanh";
  } else if (op == "Conv2d") {
    const auto groups =
        std::vector<std::int64_t>{1, 1, 2, 3}[static_cast<std::size_t>(g.integer(0, 3))];
    Shape in = g.image(4, 20);
    in[0] *= groups;
    c.inputs = {in};
    c.params["out_channels"] = g.integer(1, 4) * groups;
    c.params["groups"] = groups;
    c.params["kernel_size"] = g.pairOrInt(1, 5);
    c.params["dilation"] = g.pairOrInt(1, 3);
    c.params["bias"] = g.coin();
    switch (g.integer(0, 3)) {
      case 0:
        c.params["padding"] = "same";
        break;
      case 1:
        c.params["padding"] = "valid";
        c.params["stride"] = g.pairOrInt(1, 3);
        break;
      default:
        c.params["padding"] = g.pairOrInt(0, 3);
        c.params["stride"] = g.pairOrInt(1, 3);
    }
    if (g.coin()) c.params["in_channels"] = in[0];
  } else if (op == "ConvTranspose2d") {
    const auto groups =
        std::vector<std::int64_t>{1, 1, 2, 3}[static_cast<std::size_t>(g.integer(0, 3))];
    Shape in = g.image(4, 12);
    in[0] *= groups;
    c.inputs = {in};
    c.params["out_channels"] = g.integer(1, 4) * groups;
    c.params["groups"] = groups;
    c.params["kernel_size"] = g.pairOrInt(1, 4);
    c.params["bias"] = g.coin();
    // Per axis: mostly an output_padding below max(stride, dilation), sometimes one at it (which
    // both refuse); padding sometimes larger than the output can give up.
    Json stride = Json::array(), dilation = Json::array(), outputPadding = Json::array();
    for (int a = 0; a < 2; ++a) {
      const auto s = g.integer(1, 3);
      const auto d = g.integer(1, 2);
      const bool atLimit = g.integer(0, 5) == 0;
      stride.push_back(s);
      dilation.push_back(d);
      outputPadding.push_back(g.integer(0, std::max(s, d) - (atLimit ? 0 : 1)));
    }
    c.params["stride"] = stride;
    c.params["dilation"] = dilation;
    c.params["output_padding"] = outputPadding;
    c.params["padding"] = g.pairOrInt(0, 3);
    if (g.coin()) c.params["in_channels"] = in[0];
  } else if (op == "Upsample") {
    c.inputs = {g.image(4, 10)};
    c.params["scale_factor"] = g.pairOrInt(1, 4);
    c.params["mode"] = g.coin() ? "nearest" : "bilinear";
  } else if (op == "BatchNorm2d") {
    c.inputs = {g.image()};
    c.params["eps"] = g.real(1e-6, 1e-2);
    c.params["momentum"] = g.real(0, 1);
    c.params["affine"] = g.coin();
    if (g.coin()) c.params["num_features"] = c.inputs[0][0];
  } else if (op == "MaxPool2d" || op == "AvgPool2d") {
    c.inputs = {g.image(4, 16)};
    const auto k = g.integer(1, 4);
    c.params["kernel_size"] = g.coin() ? Json(k) : Json::array({k, g.integer(1, 4)});
    if (g.coin()) c.params["stride"] = g.pairOrInt(1, 3);
    c.params["padding"] = g.integer(0, 2);
    c.params["ceil_mode"] = g.coin();
    if (op == "MaxPool2d") c.params["dilation"] = g.pairOrInt(1, 2);
    if (op == "AvgPool2d") c.params["count_include_pad"] = g.coin();
  } else if (op == "GlobalAvgPool" || op == "Dropout2d") {
    c.inputs = {g.image()};
    if (op == "Dropout2d") c.params["p"] = g.real(0, 1);
  } else if (op == "Dropout") {
    c.inputs = {g.anyShape()};
    c.params["p"] = g.real(0, 1);
  } else if (op == "Linear") {
    c.inputs = {{g.integer(1, 40)}};
    c.params["out_features"] = g.integer(1, 20);
    c.params["bias"] = g.coin();
    if (g.coin()) c.params["in_features"] = c.inputs[0][0];
  } else if (op == "Add") {
    const Shape s = g.anyShape();
    c.inputs.assign(static_cast<std::size_t>(g.integer(2, 4)), s);
  } else if (op == "ZeroPad2d") {
    c.inputs = {g.coin() ? g.image() : Shape{g.integer(1, 40)}};  // a vector is refused
    for (const char* side : {"left", "right", "top", "bottom"})
      c.params[side] = g.integer(0, 3);
  } else if (op == "Mul") {
    // One shape twice, or a C x 1 x 1 gate and a C x H x W map (either order); sometimes a gate
    // of other channels (>= 2, so that LibTorch cannot broadcast it either).
    Shape map = g.image();
    if (g.coin()) {
      c.inputs = {map, map};
    } else {
      Shape gate{map[0], 1, 1};
      if (g.integer(0, 3) == 0) {  // both >= 2 channels: LibTorch cannot broadcast them either
        map[0] = std::max<std::int64_t>(map[0], 2);
        gate[0] = map[0] + g.integer(1, 3);
      }
      c.inputs = g.coin() ? std::vector<Shape>{gate, map} : std::vector<Shape>{map, gate};
    }
  } else if (op == "Concat") {
    const Shape s = g.anyShape();
    for (int i = 0, n = static_cast<int>(g.integer(2, 4)); i < n; ++i) {
      Shape t = s;
      t[0] = g.integer(1, 5);
      c.inputs.push_back(t);
    }
  } else {
    ADD_FAILURE() << "the property test has no generator for op " << op << "; add one";
  }
  return c;
}

std::vector<std::int64_t> sizesWithoutBatch(const torch::Tensor& t) {
  auto s = t.sizes().vec();
  s.erase(s.begin());
  return s;
}

}  // namespace

class OpShapes : public testutil::SeededTest {};

TEST_F(OpShapes, InferenceMatchesLibTorchForEveryOp) {
  constexpr int kCases = 60;
  for (const OpDef& def : registry.all()) {
    SCOPED_TRACE("op " + def.name);
    Gen g(1234);
    int checked = 0, refused = 0;
    for (int i = 0; i < kCases; ++i) {
      const Case c = randomCase(def.name, g);
      Problems problems;
      const auto params = schema::resolveParams(def.schema, c.params, "node", "n", problems);
      ASSERT_TRUE(problems.empty()) << formatProblems(problems) << " params " << c.params.dump();
      Shape inferred;
      bool fits = true;
      try {
        inferred = def.inferShape(c.inputs, params);
      } catch (const ShapeError&) {
        fits = false;
      }
      std::vector<torch::Tensor> inputs;
      for (const auto& s : c.inputs) {
        std::vector<std::int64_t> sizes{2};
        sizes.insert(sizes.end(), s.begin(), s.end());
        inputs.push_back(torch::randn(sizes));
      }
      if (!fits) {
        // What the rule refuses, LibTorch must refuse too: the rule is not stricter than needed.
        EXPECT_ANY_THROW({
          auto layer = def.build(LayerSpec{"n", params, c.inputs, {}});
          layer->forward(inputs);
        }) << "params "
           << c.params.dump() << " input " << formatShape(c.inputs[0]);
        ++refused;
        continue;
      }
      const LayerSpec spec{"n", params, c.inputs, inferred};
      auto layer = def.build(spec);
      layer->train(g.coin());
      const auto out = layer->forward(inputs);
      EXPECT_EQ(sizesWithoutBatch(out), inferred)
          << "params " << c.params.dump() << " input " << formatShape(c.inputs[0]);
      std::int64_t numel = 0;
      for (const auto& p : layer->parameters())
        numel += p.numel();
      const std::int64_t counted = def.paramCount ? def.paramCount(c.inputs, params) : 0;
      EXPECT_EQ(numel, counted) << "params " << c.params.dump();
      ++checked;
    }
    EXPECT_GE(checked, kCases / 3) << "too few valid random cases for " << def.name;
    EXPECT_EQ(checked + refused, kCases);
  }
}

TEST_F(OpShapes, RefusedGeometryIsAlsoRefusedByLibTorch) {
  // Cases the rules refuse must not be silently accepted by LibTorch either.
  const auto* pool = registry.find("MaxPool2d");
  Problems problems;
  const auto params =
      schema::resolveParams(pool->schema, Json{{"kernel_size", 5}}, "n", "n", problems);
  EXPECT_THROW(pool->inferShape({{1, 3, 3}}, params), ShapeError);
  EXPECT_ANY_THROW(torch::max_pool2d(torch::randn({1, 1, 3, 3}), {5, 5}));

  const auto* conv = registry.find("Conv2d");
  const auto cp = schema::resolveParams(conv->schema, Json{{"out_channels", 2}, {"kernel_size", 7}},
                                        "n", "n", problems);
  ASSERT_TRUE(problems.empty());
  EXPECT_THROW(conv->inferShape({{1, 4, 4}}, cp), ShapeError);
  EXPECT_ANY_THROW(torch::conv2d(torch::randn({1, 1, 4, 4}), torch::randn({2, 1, 7, 7})));
}

TEST_F(OpShapes, SamePaddingWithEvenKernelKeepsTheSize) {
  const auto* conv = registry.find("Conv2d");
  Problems problems;
  const auto p = schema::resolveParams(conv->schema,
                                       Json{{"out_channels", 3},
                                            {"kernel_size", Json::array({4, 2})},
                                            {"padding", "same"},
                                            {"dilation", 2}},
                                       "n", "n", problems);
  ASSERT_TRUE(problems.empty());
  const Shape in{2, 9, 10};
  EXPECT_EQ(conv->inferShape({in}, p), (Shape{3, 9, 10}));
  auto layer = conv->build({"n", p, {in}, {3, 9, 10}});
  EXPECT_EQ(layer->forward({torch::randn({1, 2, 9, 10})}).sizes().vec(),
            (std::vector<std::int64_t>{1, 3, 9, 10}));
}

// ConvTranspose2d refuses what PyTorch refuses, with the sizes and a fix in the message.
TEST_F(OpShapes, ConvTranspose2dRefusesWhatPyTorchRefusesWithAFix) {
  const auto* def = registry.find("ConvTranspose2d");
  ASSERT_NE(def, nullptr);
  const auto params = [&](const Json& given) {
    Problems problems;
    auto p = schema::resolveParams(def->schema, given, "n", "n", problems);
    EXPECT_TRUE(problems.empty()) << formatProblems(problems);
    return p;
  };
  const auto message = [&](const Shape& in, const Json& given) {
    try {
      def->inferShape({in}, params(given));
    } catch (const ShapeError& e) {
      return e.message + " | " + e.fix;
    }
    return std::string("(no error)");
  };
  // The defaults (kernel 2, stride 2) double the size; (in - 1)s - 2p + d(k - 1) + op + 1.
  EXPECT_EQ(def->inferShape({{3, 7, 5}}, params(Json{{"out_channels", 4}})), (Shape{4, 14, 10}));
  EXPECT_EQ(def->inferShape({{3, 7, 5}}, params(Json{{"out_channels", 4},
                                                     {"kernel_size", 3},
                                                     {"padding", 1},
                                                     {"output_padding", 1}})),
            (Shape{4, 14, 10}));
  EXPECT_EQ(def->inferShape({{2, 4, 4}}, params(Json{{"out_channels", 2},
                                                     {"kernel_size", 3},
                                                     {"stride", 1},
                                                     {"dilation", 2},
                                                     {"output_padding", 1}})),
            (Shape{2, 9, 9}));

  // output_padding must be below the stride or the dilation.
  const std::string big =
      message({3, 5, 5}, Json{{"out_channels", 4}, {"kernel_size", 3}, {"output_padding", 2}});
  EXPECT_NE(big.find("output_padding (2, 2) must be smaller than the stride (2, 2) or the "
                     "dilation (1, 1)"),
            std::string::npos)
      << big;
  EXPECT_NE(big.find("use an output_padding below 2 on the height"), std::string::npos) << big;
  EXPECT_ANY_THROW(
      torch::conv_transpose2d(torch::randn({1, 3, 5, 5}), torch::randn({3, 4, 3, 3}), {}, 2, 0, 2));

  // An output smaller than a pixel: the sizes and the padding that would fit.
  const std::string empty = message(
      {3, 2, 2}, Json{{"out_channels", 4}, {"kernel_size", 5}, {"stride", 1}, {"padding", 3}});
  EXPECT_NE(empty.find("ConvTranspose2d's output height would be 0: (2 - 1) x stride 1 - 2 x "
                       "padding 3 + dilation 1 x (kernel 5 - 1) + output_padding 0 + 1, for the "
                       "input 3x2x2"),
            std::string::npos)
      << empty;
  EXPECT_NE(empty.find("use a padding of at most 2 on the height"), std::string::npos) << empty;
  EXPECT_ANY_THROW(
      torch::conv_transpose2d(torch::randn({1, 3, 2, 2}), torch::randn({3, 4, 5, 5}), {}, 1, 3));

  // Channels: a fixed in_channels must match, groups must divide both counts.
  EXPECT_NE(message({3, 4, 4}, Json{{"out_channels", 4}, {"in_channels", 2}})
                .find("ConvTranspose2d expects 2 input channels but receives 3 | set in_channels "
                      "to 3 or \"auto\""),
            std::string::npos);
  EXPECT_NE(message({4, 4, 4}, Json{{"out_channels", 3}, {"groups", 2}})
                .find("groups = 2 must divide both the input (4) and output (3) channels"),
            std::string::npos);
  EXPECT_NE(message({8}, Json{{"out_channels", 3}}).find("needs a CxHxW image tensor"),
            std::string::npos);
}

// The default initialisation is nn.ConvTranspose2d's: kaiming_uniform(a = sqrt(5)) with fan_in
// from the weight's second dimension (out_channels / groups x kH x kW = 8 here), so weights
// and biases lie within 1 / sqrt(fan_in). Taken from in_channels instead (512 x 2 x 2), the
// bound would be 16 times smaller.
TEST_F(OpShapes, ConvTranspose2dDefaultInitIsPyTorchs) {
  const auto* def = registry.find("ConvTranspose2d");
  Problems problems;
  const auto p = schema::resolveParams(
      def->schema, Json{{"out_channels", 64}, {"kernel_size", 2}, {"groups", 32}}, "n", "n",
      problems);
  ASSERT_TRUE(problems.empty());
  const Shape in{512, 3, 3};
  EXPECT_EQ(def->inferShape({in}, p), (Shape{64, 6, 6}));
  auto layer = def->build({"n", p, {in}, {64, 6, 6}});
  auto named = layer->named_parameters();
  const auto weight = named["weight"];
  const auto bias = named["bias"];
  EXPECT_EQ(weight.sizes().vec(), (std::vector<std::int64_t>{512, 2, 2, 2}));
  const double bound = 1.0 / std::sqrt(2.0 * 2 * 2);
  EXPECT_LE(weight.abs().max().item<double>(), bound);
  EXPECT_GT(weight.abs().max().item<double>(), 0.9 * bound);
  EXPECT_LE(bias.abs().max().item<double>(), bound);
  EXPECT_GT(bias.abs().max().item<double>(), 0.1 * bound);
  // Its output size and parameter count as PyTorch's layer has them.
  EXPECT_EQ(def->paramCount({in}, p), 512 * 2 * 2 * 2 + 64);
  EXPECT_EQ(def->macs({in}, {64, 6, 6}, p), (512 / 32) * 64 * 2 * 2 * 3 * 3);
}

// Upsample: whole factors per axis; nearest repeats pixels exactly, bilinear blends them with
// half-pixel centres (align_corners=False), as nn.Upsample does.
TEST_F(OpShapes, UpsampleScalesEachAxisAsNnUpsample) {
  const auto* def = registry.find("Upsample");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->group, "Resize");
  Problems problems;
  const auto nearest = schema::resolveParams(
      def->schema, Json{{"scale_factor", Json::array({2, 3})}}, "n", "n", problems);
  const auto bilinear = schema::resolveParams(
      def->schema, Json{{"scale_factor", 2}, {"mode", "bilinear"}}, "n", "n", problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_EQ(def->inferShape({{3, 4, 5}}, nearest), (Shape{3, 8, 15}));
  EXPECT_EQ(def->inferShape({{3, 4, 5}}, bilinear), (Shape{3, 8, 10}));
  EXPECT_THROW(def->inferShape({{12}}, nearest), ShapeError);
  // Above 32 the schema refuses (PyTorch's nearest stops being floor(x / scale) at 41).
  schema::resolveParams(def->schema, Json{{"scale_factor", 41}}, "n", "n", problems);
  EXPECT_EQ(problems.size(), 1u);

  const auto x = torch::arange(12, torch::kFloat).reshape({1, 1, 3, 4});
  const auto up = def->build({"n", nearest, {{1, 3, 4}}, {1, 6, 12}})->forward({x});
  ASSERT_EQ(up.sizes().vec(), (std::vector<std::int64_t>{1, 1, 6, 12}));
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 12; ++j)
      EXPECT_EQ(up[0][0][i][j].item<float>(), x[0][0][i / 2][j / 3].item<float>());
  // Bilinear, half-pixel: output 1 of a doubled row sits at input 0.25.
  const auto blend = def->build({"n", bilinear, {{1, 3, 4}}, {1, 6, 8}})->forward({x});
  EXPECT_FLOAT_EQ(blend[0][0][0][1].item<float>(), 0.25f);
  EXPECT_FLOAT_EQ(blend[0][0][0][0].item<float>(), 0.0f);  // clamped at the edge
  EXPECT_FLOAT_EQ(blend[0][0][1][0].item<float>(), 1.0f);  // row 0.25 of column 0: 0.25 x 4
}
