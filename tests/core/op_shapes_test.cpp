// Property test: for every op, over many random parameter and input combinations, the shape
// that analysis infers equals the shape of the real LibTorch forward output, and the counted
// parameters equal the layer's real parameters.
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
