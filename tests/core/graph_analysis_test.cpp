// Every kind of bad model input gives its own named error; nothing throws.
#include "graph/graph_analysis.h"

#include "test_support.h"

using namespace netsmith;
using netsmith::testutil::parseModel;
using netsmith::testutil::problemsText;

namespace {

const char* kInput = R"("input": {"channels": 1, "height": 28, "width": 28})";

std::string model(const std::string& nodes, const std::string& extra = "") {
  return std::string("{") + kInput + R"(, "nodes": [)" + nodes + "]" + extra + "}";
}

}  // namespace

class GraphAnalysisTest : public testutil::SeededTest {
 protected:
  std::string problemsOf(const std::string& modelJson) {
    return problemsText(parseModel(modelJson), registry);
  }
  void expectProblem(const std::string& modelJson, const std::string& expected) {
    const auto text = problemsOf(modelJson);
    EXPECT_NE(text.find(expected), std::string::npos) << "expected: " << expected << "\ngot:\n"
                                                      << text;
  }
};

TEST_F(GraphAnalysisTest, ValidChainHasShapesAndCounts) {
  const auto loaded = parseModel(model(R"(
    {"id": "input", "op": "Input"},
    {"id": "conv", "op": "Conv2d", "params": {"out_channels": 4, "kernel_size": 3}, "inputs": ["input"]},
    {"id": "flat", "op": "Flatten", "inputs": ["conv"]},
    {"id": "fc", "op": "Linear", "params": {"out_features": 10}, "inputs": ["flat"]})"));
  ASSERT_TRUE(loaded.problems.empty());
  const auto a = graph::analyseGraph(loaded.project.model, registry);
  ASSERT_TRUE(a.ok()) << formatProblems(a.problems);
  EXPECT_EQ(a.find("conv")->outputShape, (Shape{4, 26, 26}));
  EXPECT_EQ(a.find("flat")->outputShape, (Shape{2704}));
  EXPECT_EQ(a.outputShape, (Shape{10}));
  EXPECT_EQ(a.outputId, "fc");
  EXPECT_EQ(a.totalParams, (4 * 9 + 4) + (2704 * 10 + 10));
  EXPECT_EQ(a.totalMacs, 4 * 26 * 26 * 9 + 2704 * 10);
}

// What an "auto" parameter stands for, as the inspector shows it: 4 channels of 26x26 flattened.
TEST_F(GraphAnalysisTest, AutoParametersReportTheirValues) {
  const auto loaded = parseModel(model(R"(
    {"id": "input", "op": "Input"},
    {"id": "conv", "op": "Conv2d", "params": {"out_channels": 4, "kernel_size": 3}, "inputs": ["input"]},
    {"id": "bn", "op": "BatchNorm2d", "inputs": ["conv"]},
    {"id": "pool", "op": "MaxPool2d", "params": {"kernel_size": [2, 3]}, "inputs": ["bn"]},
    {"id": "flat", "op": "Flatten", "inputs": ["conv"]},
    {"id": "fc", "op": "Linear", "params": {"out_features": 10}, "inputs": ["flat"]})",
                                       R"(, "output": "fc")"));
  ASSERT_TRUE(loaded.problems.empty());
  const auto a = graph::analyseGraph(loaded.project.model, registry);
  EXPECT_EQ(a.find("conv")->autoValues, (Json{{"in_channels", 1}}));
  EXPECT_EQ(a.find("bn")->autoValues, (Json{{"num_features", 4}}));
  EXPECT_EQ(a.find("pool")->autoValues, (Json{{"stride", {2, 3}}}));
  EXPECT_EQ(a.find("fc")->autoValues, (Json{{"in_features", 4 * 26 * 26}}));
  EXPECT_TRUE(a.find("flat")->autoValues.empty());
}

TEST_F(GraphAnalysisTest, UnknownOpSuggestsTheClosest) {
  expectProblem(
      model(R"({"id": "input", "op": "Input"}, {"id": "c", "op": "Conv2D", "inputs": ["input"]})"),
      R"(node "c": unknown op "Conv2D"; did you mean "Conv2d"?)");
}

TEST_F(GraphAnalysisTest, MissingRequiredParam) {
  expectProblem(
      model(R"({"id": "input", "op": "Input"}, {"id": "c", "op": "Conv2d", "inputs": ["input"]})"),
      R"(node "c": parameter out_channels is required)");
}

TEST_F(GraphAnalysisTest, OutOfRangeParam) {
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 8, "stride": 0}, "inputs": ["input"]})"),
                R"(node "c": parameter stride must be >= 1)");
}

TEST_F(GraphAnalysisTest, UnknownParamName) {
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "d", "op": "Dropout", "params": {"prob": 0.2}, "inputs": ["input"]})"),
                R"(node "d": parameter "prob" is not known)");
}

TEST_F(GraphAnalysisTest, Cycle) {
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "a", "op": "Add", "inputs": ["input", "c"]},
      {"id": "b", "op": "ReLU", "inputs": ["a"]},
      {"id": "c", "op": "ReLU", "inputs": ["b"]},
      {"id": "out", "op": "Flatten", "inputs": ["c"]})"),
                "is part of a cycle");
  const auto text = problemsOf(model(R"({"id": "input", "op": "Input"},
      {"id": "a", "op": "Add", "inputs": ["input", "c"]},
      {"id": "b", "op": "ReLU", "inputs": ["a"]},
      {"id": "c", "op": "ReLU", "inputs": ["b"]},
      {"id": "out", "op": "Flatten", "inputs": ["c"]})"));
  EXPECT_NE(text.find("a -> b -> c -> a"), std::string::npos) << text;
}

TEST_F(GraphAnalysisTest, SelfLoopIsACycle) {
  expectProblem(
      model(
          R"({"id": "input", "op": "Input"}, {"id": "a", "op": "Add", "inputs": ["input", "a"]})"),
      R"(node "a": is part of a cycle a -> a)");
}

TEST_F(GraphAnalysisTest, DanglingInput) {
  expectProblem(
      model(R"({"id": "input", "op": "Input"}, {"id": "r", "op": "ReLU", "inputs": ["inptu"]})"),
      R"(node "r": input "inptu" does not exist; did you mean "input"?)");
}

TEST_F(GraphAnalysisTest, WrongNumberOfInputs) {
  expectProblem(
      model(R"({"id": "input", "op": "Input"}, {"id": "s", "op": "Add", "inputs": ["input"]})"),
      R"(node "s": Add takes at least 2 inputs but has 1)");
  expectProblem(model(R"({"id": "input", "op": "Input"}, {"id": "r", "op": "ReLU", "inputs": []})"),
                R"(node "r": ReLU takes exactly 1 input but has 0)");
  expectProblem(
      model(
          R"({"id": "input", "op": "Input", "inputs": ["r"]}, {"id": "r", "op": "ReLU", "inputs": ["input"]})"),
      R"(node "input": Input takes exactly 0 inputs but has 1)");
}

TEST_F(GraphAnalysisTest, ShapeMismatchNamesExpectedReceivedAndFix) {
  expectProblem(
      model(R"({"id": "input", "op": "Input"},
      {"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc1", "op": "Linear", "params": {"in_features": 3136, "out_features": 10}, "inputs": ["flat"]})"),
      R"(node "fc1": Linear expects 3136 inputs but receives 784; set in_features to 784 or "auto")");
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "fc1", "op": "Linear", "params": {"out_features": 10}, "inputs": ["input"]})"),
                "insert a Flatten before it");
  expectProblem(
      model(R"({"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"in_channels": 3, "out_channels": 8}, "inputs": ["input"]})"),
      R"(node "c": Conv2d expects 3 input channels but receives 1; set in_channels to 1 or "auto")");
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 8, "stride": 2}, "inputs": ["input"]},
      {"id": "s", "op": "Add", "inputs": ["input", "c"]})"),
                "Add needs inputs of one shape but receives 1x28x28, 8x13x13");
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "p", "op": "MaxPool2d", "params": {"kernel_size": 64}, "inputs": ["input"]})"),
                R"(node "p": window 64x64 is larger than the input 1x28x28)");
}

TEST_F(GraphAnalysisTest, NoCascadeAfterAFailedNode) {
  const auto text = problemsOf(model(R"({"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 0}, "inputs": ["input"]},
      {"id": "flat", "op": "Flatten", "inputs": ["c"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 10}, "inputs": ["flat"]})"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST_F(GraphAnalysisTest, DuplicateAndInvalidIds) {
  expectProblem(
      model(
          R"({"id": "input", "op": "Input"}, {"id": "input", "op": "ReLU", "inputs": ["input"]})"),
      R"(model.nodes[1].id: id "input" is already used by model.nodes[0])");
  expectProblem(
      model(
          R"({"id": "input", "op": "Input"}, {"id": "conv.1", "op": "ReLU", "inputs": ["input"]})"),
      R"("conv.1" is not a valid id)");
}

TEST_F(GraphAnalysisTest, InputNodeCount) {
  expectProblem(model(R"({"id": "r", "op": "ReLU", "inputs": []})"), "the model has no Input node");
  expectProblem(
      model(
          R"({"id": "a", "op": "Input"}, {"id": "b", "op": "Input"}, {"id": "s", "op": "Add", "inputs": ["a", "b"]})"),
      "the model has 2 Input nodes");
}

TEST_F(GraphAnalysisTest, SeveralOutputs) {
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "a", "op": "ReLU", "inputs": ["input"]}, {"id": "b", "op": "Tanh", "inputs": ["input"]})"),
                R"(the graph has 2 outputs ("a", "b"))");
  // An explicit output makes the other branch a dead end.
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "a", "op": "ReLU", "inputs": ["input"]}, {"id": "b", "op": "Tanh", "inputs": ["input"]})",
                      R"(, "output": "a")"),
                R"(node "b": its result is never used)");
  expectProblem(model(R"({"id": "input", "op": "Input"})", R"(, "output": "zzz")"),
                R"(model.output: node "zzz" does not exist)");
}

TEST_F(GraphAnalysisTest, InitOverrides) {
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "r", "op": "ReLU", "inputs": ["input"], "init": "xavier_uniform"})"),
                R"(node "r": ReLU has no weights to initialise)");
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "c", "op": "Conv2d", "params": {"out_channels": 2}, "inputs": ["input"], "init": "he"})"),
                R"(node "c": unknown init "he")");
  expectProblem(model(R"({"id": "input", "op": "Input"},
      {"id": "b", "op": "BatchNorm2d", "inputs": ["input"], "init": "kaiming_normal"})"),
                R"(node "b": BatchNorm2d cannot use init "kaiming_normal")");
}

TEST_F(GraphAnalysisTest, StructuralProblemsInTheFile) {
  expectProblem(R"({"nodes": []})", "model.input: missing");
  expectProblem(
      std::string("{") + R"("input": {"channels": 0, "height": 28, "width": 28}, "nodes": []})",
      "model.input.channels: must be between 1 and 4096, got 0");
  expectProblem(
      std::string("{") + R"("input": {"channels": 1, "height": 28, "width": "wide"}, "nodes": []})",
      R"(model.input.width: must be a whole number, got "wide")");
  expectProblem(std::string("{") + kInput + R"(, "nodes": {}})",
                "model.nodes: must be a list of layers");
  expectProblem(model(R"({"op": "Input"})"), "model.nodes[0].id: missing");
  expectProblem(model(R"({"id": "input", "op": "Input", "inputs": "conv"})"),
                R"(node "input": "inputs" must be a list)");
  expectProblem(model(R"({"id": "input", "op": "Input", "colour": "red"})"),
                R"(model.nodes[0]: unknown key "colour")");
  expectProblem(model(R"({"id": "input", "op": "Input", "pos": [1]})"),
                R"(node "input": "pos" must be [x, y])");
  expectProblem(model("", R"(, "ouput": "x")"),
                R"(model: unknown key "ouput"; did you mean "output"?)");
  expectProblem(model(""), "model.nodes: the model has no layers");
}

TEST_F(GraphAnalysisTest, TrainingMemoryEstimateAddsItsParts) {
  const auto loaded = parseModel(model(R"(
    {"id": "input", "op": "Input"},
    {"id": "flat", "op": "Flatten", "inputs": ["input"]},
    {"id": "fc", "op": "Linear", "params": {"out_features": 10}, "inputs": ["flat"], "frozen": false})"));
  const auto a = graph::analyseGraph(loaded.project.model, registry);
  ASSERT_TRUE(a.ok());
  const auto m = graph::estimateTrainingMemory(a, 32, graph::optimizerStateSlots("adam", 0));
  const std::int64_t params = 784 * 10 + 10;
  EXPECT_EQ(m.weights, params * 4);
  EXPECT_EQ(m.gradients, params * 4);
  EXPECT_EQ(m.optimizerState, params * 8);
  EXPECT_EQ(m.inputBatch, 784 * 4 * 32);
  EXPECT_EQ(m.activations, (784 + 10) * 4 * 32);
  EXPECT_EQ(m.total(), m.weights + m.gradients + m.optimizerState + m.inputBatch + m.activations);
}

TEST_F(GraphAnalysisTest, FrozenNodesAreNotTrainable) {
  const auto loaded = parseModel(model(R"(
    {"id": "input", "op": "Input"},
    {"id": "flat", "op": "Flatten", "inputs": ["input"]},
    {"id": "fc", "op": "Linear", "params": {"out_features": 10}, "inputs": ["flat"], "frozen": true})"));
  const auto a = graph::analyseGraph(loaded.project.model, registry);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.totalParams, 7850);
  EXPECT_EQ(a.trainableParams, 0);
}
