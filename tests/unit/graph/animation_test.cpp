// Animated parameters: expressions (arithmetic, precedence, functions,
// variables, errors with their column), keyframes (each interpolation
// through its keys, smooth ones with continuous slope), and their place in
// the graph format (version 2, validation naming the place and the frame,
// the round trip through graph_to_json, --set, signatures per frame).
#include <gtest/gtest.h>

#include <cmath>

#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "test_nodes.h"

namespace eddy {
namespace {

double eval(const std::string& text, double frame = 1, double fps = 24, double start = 1, double end = 100) {
  return Expression(text).eval({frame, fps, start, end});
}

std::string expression_error(const std::string& text) {
  try {
    Expression e(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Expression, ArithmeticFollowsTheUsualPrecedence) {
  EXPECT_DOUBLE_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(eval("2 ^ 3 ^ 2"), 512);  // right-associative
  EXPECT_DOUBLE_EQ(eval("-2 ^ 2"), -4);      // -(2^2)
  EXPECT_DOUBLE_EQ(eval("2 ^ -1"), 0.5);
  EXPECT_DOUBLE_EQ(eval("7 % 4 - 10 / 4"), 3 - 2.5);
  EXPECT_DOUBLE_EQ(eval("1 < 2 && 2 <= 2 && !(3 == 4) && 3 != 4 || 0"), 1);
  EXPECT_DOUBLE_EQ(eval("2 > 3 ? 10 : 20"), 20);
  EXPECT_DOUBLE_EQ(eval("1.5e2 + .5"), 150.5);
}

TEST(Expression, FunctionsAndConstants) {
  EXPECT_NEAR(eval("sin(pi / 2) + cos(0) + tan(0)"), 2, 1e-15);
  EXPECT_NEAR(eval("atan2(1, 1)"), std::atan(1.0), 1e-15);
  EXPECT_NEAR(eval("log(e) + log10(1000) + exp(0) + sqrt(16)"), 1 + 3 + 1 + 4, 1e-14);
  EXPECT_DOUBLE_EQ(eval("abs(-3) + sign(-2) + floor(1.7) + ceil(1.2) + round(2.5)"), 3 - 1 + 1 + 2 + 3);
  EXPECT_DOUBLE_EQ(eval("min(3, 4) + max(3, 4) + pow(2, 10) + clamp(5, 0, 1)"), 3 + 4 + 1024 + 1);
  EXPECT_DOUBLE_EQ(eval("fit(5, 0, 10, 100, 200)"), 150);
  EXPECT_DOUBLE_EQ(eval("fit(-5, 0, 10, 100, 200)"), 100);  // clamped to the old range
  EXPECT_DOUBLE_EQ(eval("if(0, 1, 2)"), 2);
}

TEST(Expression, TimeVariables) {
  // Frame 13 at 24 fps from frame 1: half a second in.
  EXPECT_DOUBLE_EQ(eval("$F", 13), 13);
  EXPECT_DOUBLE_EQ(eval("$T", 13), 0.5);
  EXPECT_DOUBLE_EQ(eval("$FPS + $FSTART + $FEND", 13, 30, 5, 50), 85);
  EXPECT_NEAR(eval("0.5 * sin(2 * pi * $T)", 7), 0.5, 1e-15);  // a quarter period at 1 Hz
  EXPECT_DOUBLE_EQ(eval("$F", 2.25), 2.25);                    // between frames
}

TEST(Expression, ErrorsNameWhatAndTheColumn) {
  EXPECT_EQ(expression_error("0.1 * $Q"),
            "expression \"0.1 * $Q\": unknown variable $Q (variables: $F $T $FPS $FSTART $FEND) at column 7");
  EXPECT_EQ(expression_error("foo(1)"),
            "expression \"foo(1)\": unknown name 'foo' (a variable is written with $, e.g. $F) at column 1");
  EXPECT_EQ(expression_error("(1 + 2"), "expression \"(1 + 2\": expected ')' at column 7");
  EXPECT_EQ(expression_error("1 +"), "expression \"1 +\": unexpected end at column 4");
  EXPECT_EQ(expression_error("min(1)"), "expression \"min(1)\": min() takes 2 argument(s), got 1 at column 1");
  EXPECT_EQ(expression_error("1 2"), "expression \"1 2\": unexpected '2' at column 3");
  EXPECT_EQ(expression_error("1 ? 2"), "expression \"1 ? 2\": expected ':' of 'c ? a : b' at column 6");
  // Nesting is bounded (the parser recurses): parentheses and unary chains alike.
  EXPECT_NE(expression_error(std::string(100, '(') + "1" + std::string(100, ')')).find("nested deeper than 64 levels"),
            std::string::npos);
  EXPECT_NE(expression_error(std::string(100, '-') + "1").find("nested deeper than 64 levels"), std::string::npos);
  EXPECT_DOUBLE_EQ(eval(std::string(20, '(') + "2" + std::string(20, ')')), 2);
}

TEST(Keyframes, EachInterpolationPassesThroughItsKeys) {
  const std::vector<std::array<double, 2>> keys{{1, 0}, {11, 10}, {21, 0}, {41, 4}};
  for (Interpolation in : {Interpolation::Linear, Interpolation::Smooth, Interpolation::Constant}) {
    const Channel c = Channel::keys(keys, in);
    for (const auto& k : keys) EXPECT_DOUBLE_EQ(c.eval({k[0], 24, 1, 41}), k[1]) << interpolation_name(in);
    EXPECT_DOUBLE_EQ(c.eval({-5, 24, 1, 41}), 0) << "before the first key: its value";
    EXPECT_DOUBLE_EQ(c.eval({99, 24, 1, 41}), 4) << "after the last key: its value";
  }
  EXPECT_DOUBLE_EQ(Channel::keys(keys, Interpolation::Linear).eval({6, 24, 1, 41}), 5);
  EXPECT_DOUBLE_EQ(Channel::keys(keys, Interpolation::Constant).eval({10.9, 24, 1, 41}), 0);
}

TEST(Keyframes, SmoothCurvesHaveContinuousSlopesAndFlatEnds) {
  const Channel c = Channel::keys({{1, 0}, {11, 10}, {21, 0}, {41, 4}}, Interpolation::Smooth);
  auto slope = [&](double f) {
    const double h = 1e-5;
    return (c.eval({f + h, 24, 1, 41}) - c.eval({f - h, 24, 1, 41})) / (2 * h);
  };
  auto one_sided = [&](double f, double side) {
    const double h = 1e-6;
    return side * (c.eval({f + side * h, 24, 1, 41}) - c.eval({f, 24, 1, 41})) / h;
  };
  for (double f : {11.0, 21.0}) EXPECT_NEAR(one_sided(f, -1), one_sided(f, 1), 1e-4) << "at key " << f;
  // The slope at a key is that between its neighbours (Catmull-Rom on uneven frames).
  EXPECT_NEAR(slope(21), (4.0 - 10.0) / (41 - 11), 1e-5);
  EXPECT_NEAR(one_sided(1, 1), 0, 1e-4);
  EXPECT_NEAR(one_sided(41, -1), 0, 1e-4);
}

TEST(Keyframes, FramesMustIncrease) {
  EXPECT_THROW(Channel::keys({{1, 0}, {1, 1}}, Interpolation::Linear), Error);
  EXPECT_THROW(Channel::keys({}, Interpolation::Linear), Error);
  EXPECT_THROW(Channel::keys({{1, NAN}}, Interpolation::Linear), Error);
}

// ---- in the graph format

class AnimatedGraph : public ::testing::Test {
 protected:
  void SetUp() override { testing::register_test_nodes(reg); }
  // A Source whose `value` (a float in [-10, 10] m) is `value`, in a graph of version `version`.
  std::string graph(const std::string& value, int version = 2, const std::string& range = "[1, 10]") {
    return R"({"format": "eddy-graph", "version": )" + std::to_string(version) + R"(, "frame_range": )" + range +
           R"(, "fps": 24, "nodes": [{"id": "src", "type": "Source", "params": {"count": 2, "value": )" + value +
           R"(}}, {"id": "sum", "type": "Sum"}], "links": [{"from": "src.points", "to": "sum.points"}]})";
  }
  std::string error_of(const std::string& text) { return testing::parse_error(text, reg); }
  double value_at(CookEngine& e, int frame) { return e.cook("src", frame)->at("points").as<Points>()->P()[0].x; }
  Registry reg;
};

TEST_F(AnimatedGraph, AnExpressionIsEvaluatedAtEachFrame) {
  const Graph g = parse_graph(graph(R"({"expr": "0.5 * $F"})"), reg, "g.json");
  EXPECT_DOUBLE_EQ(std::get<double>(g.find("src")->params.at("value")), 0.5);  // its value at the start frame
  CookEngine e(reg, g);
  EXPECT_FLOAT_EQ(value_at(e, 3), 1.5f);
  EXPECT_FLOAT_EQ(value_at(e, 4), 2.0f);
}

TEST_F(AnimatedGraph, KeyframesAreInterpolatedBetweenFrames) {
  CookEngine e(reg, parse_graph(graph(R"({"keys": [[1, 0], [5, 2]], "interpolation": "linear"})"), reg, "g.json"));
  EXPECT_FLOAT_EQ(value_at(e, 3), 1.0f);
  EXPECT_FLOAT_EQ(value_at(e, 9), 2.0f);
}

TEST_F(AnimatedGraph, ABadExpressionOrAValueOutOfRangeIsNamedWithItsPlace) {
  EXPECT_EQ(error_of(graph(R"({"expr": "0.1 * $Q"})")),
            "g.json: nodes[0] (\"src\").params.value: expression \"0.1 * $Q\": unknown variable $Q (variables: $F "
            "$T $FPS $FSTART $FEND) at column 7");
  // Within range at the start, out of it at frame 7: refused before anything cooks.
  EXPECT_EQ(error_of(graph(R"({"expr": "2 * $F - 4"})")),
            "g.json: nodes[0] (\"src\").params.value: the expression \"2 * $F - 4\" gives 12 at frame 8, expected a "
            "number in [-10, 10] (m)");
  EXPECT_EQ(error_of(graph(R"x({"expr": "1 / ($F - 5)"})x")),
            "g.json: nodes[0] (\"src\").params.value: the expression \"1 / ($F - 5)\" gives inf at frame 5, expected a "
            "finite number");
  EXPECT_EQ(error_of(graph(R"({"keys": [[3, 1], [2, 0]]})")),
            "g.json: nodes[0] (\"src\").params.value: keyframes: key 1 at frame 2.000000 does not come after the key "
            "before it; frames must increase");
  EXPECT_EQ(error_of(graph(R"({"keys": [[1, 0]], "interpolation": "cubic"})")),
            "g.json: nodes[0] (\"src\").params.value: interpolation: expected linear, smooth or constant, got \"cubic\"");
  EXPECT_EQ(error_of(graph(R"({"expr": "$F", "keys": []})")),
            "g.json: nodes[0] (\"src\").params.value: expected {\"expr\": \"...\"} or {\"keys\": [[frame, value], ...], "
            "\"interpolation\": ...}, got {\"expr\":\"$F\",\"keys\":[]}");
  EXPECT_EQ(error_of(graph(R"({"expr": "$F"})", 1)),
            "g.json: nodes[0] (\"src\").params.value: animated values need \"version\": 2");
}

TEST_F(AnimatedGraph, StatefulNodesRefuseAnimatedParameters) {
  const std::string text = R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 5], "nodes": [
    {"id": "src", "type": "Source"},
    {"id": "sim", "type": "Integrator", "params": {"step": {"expr": "$T"}}}],
    "links": [{"from": "src.points", "to": "sim.points"}]})";
  EXPECT_EQ(error_of(text),
            "g.json: nodes[1] (\"sim\").params.step: Integrator reads its parameters once, when it starts; animated "
            "parameters are not supported on it yet");
}

TEST_F(AnimatedGraph, SavedAsVersion2OnlyWhenAnimatedAndReadBackTheSame) {
  const Graph still = parse_graph(graph("1.5", 1), reg, "g.json");
  EXPECT_NE(graph_to_json(still, reg).find("\"version\": 1"), std::string::npos);
  const Graph g = parse_graph(graph(R"({"keys": [[1, 0], [5, 2.5]], "interpolation": "smooth"})"), reg, "g.json");
  const std::string text = graph_to_json(g, reg);
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos);
  const Graph back = parse_graph(text, reg, "back.json");
  ASSERT_EQ(back.find("src")->anims.count("value"), 1u);
  EXPECT_EQ(back.find("src")->anims.at("value").channels[0]->describe(),
            g.find("src")->anims.at("value").channels[0]->describe());
  EXPECT_EQ(graph_to_json(back, reg), text);
}

TEST_F(AnimatedGraph, SetTakesAnExpressionAndAPlainValueEndsTheAnimation) {
  Graph g = parse_graph(graph("1.0"), reg, "g.json");
  apply_override(g, reg, R"(src.value={"expr": "$F / 10"})");
  ASSERT_EQ(g.find("src")->anims.count("value"), 1u);
  CookEngine e(reg, g);
  EXPECT_FLOAT_EQ(value_at(e, 4), 0.4f);
  apply_override(g, reg, "src.value=2");
  EXPECT_EQ(g.find("src")->anims.count("value"), 0u);
  EXPECT_THROW(apply_override(g, reg, R"(src.value={"expr": "$F * 100"})"), Error);  // 200 at frame 2: out of range
  EXPECT_THROW(apply_override(g, reg, R"(src.value={"expr": "$F" )"), Error);         // not JSON, not a number
}

// The cache: a still node's output serves every frame; an animated one's
// is its frame's, and a changed animation is cooked anew.
TEST_F(AnimatedGraph, AnAnimatedNodeIsCachedPerFrameAndPerAnimation) {
  CookEngine still(reg, parse_graph(graph("1.0"), reg, "g.json"));
  still.cook("src", 2);
  EXPECT_TRUE(still.is_cached("src", 3));
  CookEngine e(reg, parse_graph(graph(R"({"expr": "0.5 + 0 * $F"})"), reg, "g.json"));
  e.cook("src", 2);
  EXPECT_TRUE(e.is_cached("src", 2));
  EXPECT_FALSE(e.is_cached("src", 3));
  e.set_graph(parse_graph(graph(R"({"expr": "0.5 + 0 * $T"})"), reg, "g.json"));
  EXPECT_FALSE(e.is_cached("src", 2));
}

}  // namespace
}  // namespace eddy
