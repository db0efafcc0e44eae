#include "schema/param_schema.h"

#include <gtest/gtest.h>

using namespace netsmith;
using namespace netsmith::schema;

namespace {

const ParamSchema kSchema = {
    ParamSpec::integer("channels", "auto", "channels").atLeast(1).orKeywords({"auto"}),
    ParamSpec::intPair("kernel_size", 3, "kernel").atLeast(1),
    ParamSpec::real("p", 0.5, "probability").atLeast(0).atMost(1),
    ParamSpec::real("eps", 1e-5, "epsilon").above(0),
    ParamSpec::boolean("bias", true, "bias"),
    ParamSpec::choice("mode", "none", {"none", "tanh"}, "mode"),
    ParamSpec::integer("out", nullptr, "required"),
};

Params resolve(const Json& given, Problems& problems) {
  return resolveParams(kSchema, given, "node \"n\"", "n", problems);
}

}  // namespace

TEST(ParamSchema, FillsDefaultsAndNormalisesPairs) {
  Problems problems;
  const auto p = resolve(Json{{"out", 4}, {"kernel_size", 5}}, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_TRUE(p.isAuto("channels"));
  EXPECT_EQ(p.pair("kernel_size"), (std::array<std::int64_t, 2>{5, 5}));
  EXPECT_DOUBLE_EQ(p.real("p"), 0.5);
  EXPECT_TRUE(p.flag("bias"));
  EXPECT_EQ(p.text("mode"), "none");
  EXPECT_EQ(p.integer("out"), 4);
}

TEST(ParamSchema, AcceptsWholeFloatsAsIntegers) {
  Problems problems;
  const auto p = resolve(Json{{"out", 4.0}, {"kernel_size", Json::array({3.0, 5})}}, problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_EQ(p.integer("out"), 4);
  EXPECT_EQ(p.pair("kernel_size"), (std::array<std::int64_t, 2>{3, 5}));
}

struct BadCase {
  Json given;
  std::string expected;
};

// Test names print the case as JSON (not as raw bytes).
void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.given.dump();
}

class ParamSchemaBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParamSchemaBad, NamesTheParameterAndTheReason) {
  Problems problems;
  Json given = GetParam().given;
  if (!given.contains("out")) given["out"] = 1;
  resolve(given, problems);
  ASSERT_EQ(problems.size(), 1u) << formatProblems(problems);
  EXPECT_EQ(problems[0].path, "node \"n\"");
  EXPECT_EQ(problems[0].nodeId, "n");
  EXPECT_NE(problems[0].message.find(GetParam().expected), std::string::npos)
      << problems[0].message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParamSchemaBad,
    ::testing::Values(
        BadCase{Json{{"kernal_size", 3}},
                "parameter \"kernal_size\" is not known; did you mean \"kernel_size\"?"},
        BadCase{Json{{"kernel_size", 0}}, "parameter kernel_size must be >= 1"},
        BadCase{Json{{"kernel_size", Json::array({3, 0})}}, "parameter kernel_size must be >= 1"},
        BadCase{Json{{"kernel_size", Json::array({3, 3, 3})}},
                "kernel_size expects a whole number or a pair"},
        BadCase{Json{{"kernel_size", "big"}}, "kernel_size expects a whole number or a pair"},
        BadCase{Json{{"channels", 2.5}}, "channels expects a whole number or \"auto\", got 2.5"},
        BadCase{Json{{"channels", "many"}}, "channels expects a whole number or \"auto\""},
        BadCase{Json{{"p", 1.5}}, "parameter p must be <= 1 (got 1.5)"},
        BadCase{Json{{"p", -0.1}}, "parameter p must be >= 0"},
        BadCase{Json{{"eps", 0}}, "parameter eps must be > 0"},
        BadCase{Json{{"bias", 1}}, "parameter bias expects true or false"},
        BadCase{Json{{"mode", "fast"}},
                "parameter mode expects one of \"none\" or \"tanh\", got \"fast\""},
        BadCase{Json{{"out", nullptr}}, "parameter out expects a whole number"}));

TEST(ParamSchema, MissingRequiredParameter) {
  Problems problems;
  resolve(Json::object(), problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("parameter out is required"), std::string::npos);
}

TEST(ParamSchema, ParamsMustBeAnObject) {
  Problems problems;
  resolve(Json::array({1, 2}), problems);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].message.find("params must be an object"), std::string::npos);
}

TEST(ParamSchema, ClosestNameOnlySuggestsNearNames) {
  EXPECT_EQ(closestName("kernal_size", {"kernel_size", "stride"}), "kernel_size");
  EXPECT_EQ(closestName("zzzzzz", {"kernel_size", "stride"}), "");
}
