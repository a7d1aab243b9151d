// The cook engine: memoisation by signature, stateful frames continuing from
// the previous one, invalidation from the start when anything upstream
// changes, resumption from the latest cached frame, cancellation, errors
// naming node and frame.
#include <gtest/gtest.h>

#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "test_nodes.h"

namespace eddy {
namespace {

using testing::cook_count;

class CookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::register_test_nodes(reg);
    for (const char* t : {"Source", "Integrator", "Sum"}) cook_count(t) = 0;
  }
  Graph graph(int start = 1, int end = 20) {
    return parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [)" + std::to_string(start) + ", " +
                           std::to_string(end) + R"(],
      "nodes": [{"id": "src", "type": "Source"}, {"id": "sim", "type": "Integrator"}, {"id": "sum", "type": "Sum"}],
      "links": [{"from": "src.points", "to": "sim.points"}, {"from": "sim.points", "to": "sum.points"}]})",
                       reg, "");
  }
  static float x_of(const std::shared_ptr<const Outputs>& o) { return o->at("points").as<Points>()->P()[0].x; }
  Registry reg;
};

TEST_F(CookTest, StatelessNodesCookOncePerSignature) {
  CookEngine e(reg, graph());
  for (int f = 1; f <= 5; ++f) e.cook("src", f);
  EXPECT_EQ(cook_count("Source"), 1);  // frame-independent: cooked once
  e.cook_frame(3);
  e.cook_frame(3);
  EXPECT_EQ(cook_count("Sum"), 1);
  EXPECT_TRUE(e.is_cached("sum", 3));
  EXPECT_FALSE(e.is_cached("sum", 4));
}

TEST_F(CookTest, StatefulNodeContinuesFromThePreviousFrame) {
  CookEngine e(reg, graph());
  // Sum of 3 particles at 1 + (f - 1) * step.
  EXPECT_FLOAT_EQ(x_of(e.cook("sum", 1)), 3.0f);
  EXPECT_FLOAT_EQ(x_of(e.cook("sum", 4)), 3.0f * 4.0f);
  EXPECT_EQ(cook_count("Integrator"), 4);  // frames 1..4, each once
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 6)), 6.0f);
  EXPECT_EQ(cook_count("Integrator"), 6);  // resumed from cached frame 4
  e.cook("sim", 2);                        // cached
  EXPECT_EQ(cook_count("Integrator"), 6);
}

TEST_F(CookTest, ABypassedNodePassesItsInputOnAndRoundTrips) {
  Graph g = graph();
  g.find("sim")->bypass = true;
  CookEngine e(reg, g);
  // The integrator does not cook: the sum sees the source's particles at every frame.
  EXPECT_FLOAT_EQ(x_of(e.cook("sum", 5)), 3.0f);
  EXPECT_EQ(cook_count("Integrator"), 0);
  // Turning bypass off is a change like any other: the simulation cooks.
  g.find("sim")->bypass = false;
  e.set_graph(g);
  EXPECT_FLOAT_EQ(x_of(e.cook("sum", 5)), 3.0f * 5.0f);
  // The flag survives the file format; anything but a boolean is refused by name.
  g.find("sim")->bypass = true;
  const std::string text = graph_to_json(g, reg);
  EXPECT_NE(text.find("\"bypass\": true"), std::string::npos);
  EXPECT_TRUE(parse_graph(text, reg, "").find("sim")->bypass);
  std::string bad = text;
  bad.replace(bad.find("\"bypass\": true"), 14, "\"bypass\": 1");
  try {
    parse_graph(bad, reg, "");
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("bypass: expected true or false"), std::string::npos) << err.what();
  }
}

TEST_F(CookTest, FramesBeforeTheStartGiveTheStartState) {
  CookEngine e(reg, graph(5, 10));
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 2)), 1.0f);
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 7)), 3.0f);
}

TEST_F(CookTest, ChangingUpstreamOrSolverParametersInvalidatesFromTheStart) {
  CookEngine e(reg, graph());
  e.cook("sim", 5);
  ASSERT_EQ(cook_count("Integrator"), 5);
  Graph g = e.graph();
  g.find("src")->params["value"] = 2.0;
  e.set_graph(g);
  EXPECT_FALSE(e.is_cached("sim", 1));
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 5)), 6.0f);  // 2 + 4 steps
  EXPECT_EQ(cook_count("Integrator"), 10);
  g.find("sim")->params["step"] = 0.5;
  e.set_graph(g);
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 3)), 3.0f);
  EXPECT_EQ(cook_count("Integrator"), 13);
  // Back to the first graph: its frames are still cached.
  g.find("sim")->params["step"] = 1.0;
  e.set_graph(g);
  e.cook("sim", 5);
  EXPECT_EQ(cook_count("Integrator"), 13);
  // A downstream-only change keeps the solver's frames.
  g.find("sum")->position = {5, 5};
  e.set_graph(g);
  EXPECT_TRUE(e.is_cached("sim", 5));
}

TEST_F(CookTest, EvictedFramesAreRecookedFromTheLatestCachedOne) {
  CookOptions o;
  o.cache_bytes = 1;  // keeps only the newest entry
  CookEngine e(reg, graph(), o);
  e.cook("sim", 6);
  EXPECT_EQ(cook_count("Integrator"), 6);
  e.cook("sim", 8);  // frame 6 is the newest cached: 7, 8
  EXPECT_EQ(cook_count("Integrator"), 8);
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 3)), 3.0f);  // nothing before 3 cached: from the start
  EXPECT_EQ(cook_count("Integrator"), 11);
}

TEST_F(CookTest, ErrorsNameTheNodeAndTheFrame) {
  Graph g = graph();
  g.find("sim")->params["fail"] = true;
  CookEngine e(reg, g);
  try {
    e.cook("sum", 5);
    FAIL();
  } catch (const NodeError& err) {
    EXPECT_EQ(err.node_id, "sim");
    EXPECT_EQ(err.frame, 3);
    EXPECT_STREQ(err.what(), "node 'sim' (Integrator), frame 3: asked to fail");
  }
}

class CancelAfter final : public CookObserver {
 public:
  CancelAfter(CookEngine& e, int frames) : e_(e), left_(frames) {}
  void node_progress(const std::string&, int, double, const std::string&) override {
    if (--left_ == 0) e_.cancel();
  }
  CookEngine& e_;
  int left_;
};

TEST_F(CookTest, CancellationStopsTheCookAndKeepsWhatWasDone) {
  CookEngine e(reg, graph());
  CancelAfter obs(e, 3);
  e.set_observer(&obs);
  EXPECT_THROW(e.cook("sim", 10), Cancelled);
  e.set_observer(nullptr);
  EXPECT_TRUE(e.is_cached("sim", 2));
  EXPECT_FALSE(e.is_cached("sim", 3));  // the cancelled frame left nothing
  e.clear_cancel();
  EXPECT_FLOAT_EQ(x_of(e.cook("sim", 10)), 10.0f);
}

TEST_F(CookTest, MultiInputsArriveInLinkOrder) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 1],
    "nodes": [{"id": "a", "type": "Source", "params": {"value": 1, "count": 1}},
              {"id": "b", "type": "Source", "params": {"value": 5, "count": 2}},
              {"id": "s", "type": "Sum"}],
    "links": [{"from": "a.points", "to": "s.points"}, {"from": "b.points", "to": "s.points"}]})",
                              reg, "");
  CookEngine e(reg, g);
  EXPECT_FLOAT_EQ(x_of(e.cook("s", 1)), 11.0f);
}

}  // namespace
}  // namespace eddy
