// Graph loading and validation: each kind of bad input is refused with a
// message naming the place; defaults fill missing parameters.
#include <gtest/gtest.h>

#include "eddy/graph/graph.h"
#include "test_nodes.h"

namespace eddy {
namespace {

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::register_test_nodes(reg); }
  std::string error_of(const std::string& text) { return testing::parse_error(text, reg); }
  Registry reg;
};

const char* kGood = R"({
  "format": "eddy-graph", "version": 1, "frame_range": [1, 10], "fps": 30,
  "nodes": [
    {"id": "src", "type": "Source", "params": {"count": 5}, "position": [10, 20]},
    {"id": "sim", "type": "Integrator"},
    {"id": "sum", "type": "Sum"}
  ],
  "links": [
    {"from": "src.points", "to": "sim.points"},
    {"from": "sim.points", "to": "sum.points"},
    {"from": "src.points", "to": "sum.points"}
  ]
})";

TEST_F(GraphTest, LoadsAndFillsDefaults) {
  const Graph g = parse_graph(kGood, reg, "g.json");
  EXPECT_EQ(g.frame_start, 1);
  EXPECT_EQ(g.frame_end, 10);
  EXPECT_EQ(g.fps, 30);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(g.nodes[0].params.at("count")), 5);
  EXPECT_EQ(std::get<double>(g.nodes[0].params.at("value")), 1.0);  // default
  EXPECT_EQ(g.nodes[0].position[1], 20);
  EXPECT_EQ(g.terminal_nodes(), std::vector<std::string>{"sum"});
  EXPECT_EQ(g.links_into("sum", "points").size(), 2u);
}

TEST_F(GraphTest, SavedGraphLoadsBackTheSame) {
  const Graph g = parse_graph(kGood, reg, "g.json");
  const Graph h = parse_graph(graph_to_json(g, reg), reg, "h.json");
  EXPECT_EQ(graph_to_json(g, reg), graph_to_json(h, reg));
  EXPECT_EQ(h.nodes[0].params, g.nodes[0].params);
}

struct BadCase {
  const char* name;
  std::string edit_from, edit_to;  // text replacement in kGood
  std::string message;             // expected substring
};

TEST_F(GraphTest, BadInputsNameThePlace) {
  const std::vector<BadCase> cases = {
      {"invalid JSON", "\"fps\": 30,", "\"fps\": 30,,", "g.json:2:"},
      {"invalid JSON says so", "\"fps\": 30,", "\"fps\": 30,,", "invalid JSON"},
      {"wrong format", "eddy-graph", "other", "format: expected \"eddy-graph\""},
      {"newer version", "\"version\": 1", "\"version\": 3", "written by a newer eddy"},
      {"inverted range", "[1, 10]", "[10, 1]", "frame_range: end 1 is before start 10"},
      {"empty range", "[1, 10]", "[]", "frame_range: expected [start, end]"},
      {"unknown type", "\"Integrator\"", "\"Integrater\"",
       "nodes[1] (\"sim\").type: unknown node type \"Integrater\"; did you mean \"Integrator\"?"},
      {"unknown parameter", "{\"count\": 5}", "{\"cuont\": 5}",
       "nodes[0] (\"src\").params.cuont: unknown parameter of Source; did you mean \"count\"?"},
      {"wrong type", "{\"count\": 5}", "{\"count\": \"five\"}",
       "nodes[0] (\"src\").params.count: expected an integer in [0, 1000], got \"five\""},
      {"out of range", "{\"count\": 5}", "{\"count\": -2}",
       "nodes[0] (\"src\").params.count: expected an integer in [0, 1000], got -2"},
      {"float out of range", "{\"count\": 5}", "{\"value\": 11.5}", "params.value: expected a number in [-10, 10] (m), got 11.5"},
      {"missing node", "\"src.points\", \"to\": \"sim.points\"", "\"srx.points\", \"to\": \"sim.points\"",
       "links[0].from: no node \"srx\"; did you mean \"src\"?"},
      {"missing socket", "\"to\": \"sim.points\"", "\"to\": \"sim.pionts\"",
       "links[0].to: Integrator \"sim\" has no input \"pionts\"; did you mean \"points\"?"},
      {"type mismatch", "\"to\": \"sim.points\"", "\"to\": \"sum.colliders\"",
       "links[0]: cannot connect \"src.points\" (points) to \"sum.colliders\" (colliders)"},
      {"duplicate id", "{\"id\": \"sum\", \"type\": \"Sum\"}", "{\"id\": \"src\", \"type\": \"Sum\"}",
       "nodes[2].id: duplicate node id \"src\" (first used by nodes[0])"},
      {"second link into a single input", "{\"from\": \"src.points\", \"to\": \"sum.points\"}",
       "{\"from\": \"src.points\", \"to\": \"sim.points\"}", "already has a link (links[0]) and takes only one"},
      {"unconnected required input", "{\"from\": \"src.points\", \"to\": \"sim.points\"},", "",
       "nodes[1] (\"sim\"): required input \"points\" (points) is not connected"},
      {"bad enum", "{\"id\": \"sim\", \"type\": \"Integrator\"}",
       "{\"id\": \"sim\", \"type\": \"Integrator\", \"params\": {\"mode\": \"c\"}}",
       "params.mode: expected one of a, b, got \"c\""},
      {"unknown top-level key", "\"fps\": 30,", "\"fps\": 30, \"nodez\": [],", "nodez: unknown key; did you mean \"nodes\"?"},
      {"bad fps", "\"fps\": 30", "\"fps\": -1", "fps: expected a number in [1, 10000], got -1"},
      {"vanishing fps", "\"fps\": 30", "\"fps\": 1e-300", "fps: expected a number in [1, 10000], got 1e-300"},
      {"fps not a number", "\"fps\": 30", "\"fps\": \"30\"", "fps: expected a number, got \"30\""},
      {"frame beyond int", "[1, 10]", "[1, 3000000000]", "frame_range: frame 3000000000 is outside [-1000000000, 1000000000]"},
      {"frame far below", "[1, 10]", "[-1000000001, 10]", "frame_range: frame -1000000001 is outside"},
      {"frame past int64", "[1, 10]", "[1, 18446744073709551615]", "frame_range: frame 18446744073709551615 is outside"},
      {"number beyond double", "{\"count\": 5}", "{\"value\": 1e999}", "g.json: invalid JSON: number overflow parsing '1e999'"},
      {"too deep", "\"fps\": 30,", "\"fps\": 30, \"comment\": " + std::string(200, '[') + std::string(200, ']') + ",",
       "g.json:2:"},
      {"too deep says so", "\"fps\": 30,", "\"fps\": 30, \"comment\": " + std::string(200, '[') + std::string(200, ']') + ",",
       "JSON nested deeper than 128 levels"},
  };
  for (const auto& c : cases) {
    std::string text = kGood;
    const auto at = text.find(c.edit_from);
    ASSERT_NE(at, std::string::npos) << c.name;
    text.replace(at, c.edit_from.size(), c.edit_to);
    const std::string msg = error_of(text);
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.name << ": got \"" << msg << "\"";
    EXPECT_EQ(msg.rfind("g.json", 0), 0u) << c.name << " names the file first: " << msg;
  }
}

TEST_F(GraphTest, CycleIsRefusedWithItsPath) {
  const std::string text = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 2],
    "nodes": [{"id": "a", "type": "Sum"}, {"id": "b", "type": "Sum"}, {"id": "c", "type": "Sum"}],
    "links": [{"from": "a.points", "to": "b.points"}, {"from": "b.points", "to": "c.points"},
              {"from": "c.points", "to": "a.points"}]})";
  EXPECT_NE(error_of(text).find("the graph has a cycle: a -> b -> c -> a"), std::string::npos) << error_of(text);
}

TEST_F(GraphTest, OverridesAreValidatedLikeTheFile) {
  Graph g = parse_graph(kGood, reg, "g.json");
  apply_override(g, reg, "src.count=7");
  EXPECT_EQ(std::get<int64_t>(g.find("src")->params.at("count")), 7);
  apply_override(g, reg, "sim.mode=b");
  EXPECT_EQ(std::get<std::string>(g.find("sim")->params.at("mode")), "b");
  auto msg = [&](const std::string& a) {
    try {
      apply_override(g, reg, a);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("src.count=-3").find("expected an integer in [0, 1000], got -3"), std::string::npos);
  EXPECT_NE(msg("srx.count=3").find("no node \"srx\"; did you mean \"src\"?"), std::string::npos);
  EXPECT_NE(msg("src.cont=3").find("has no parameter \"cont\"; did you mean \"count\"?"), std::string::npos);
  EXPECT_NE(msg("src.count").find("expected NODE.PARAM=VALUE"), std::string::npos);
}

TEST_F(GraphTest, CatalogListsEverySpec) {
  const std::string cat = catalog_json(reg);
  for (const char* s : {"\"Source\"", "\"Integrator\"", "\"Sum\"", "\"multi\": true", "\"items\""})
    EXPECT_NE(cat.find(s), std::string::npos) << s;
}

TEST(Registry, RefusesDuplicateAndMalformedSpecs) {
  Registry r;
  testing::register_test_nodes(r);
  NodeSpec dup;
  dup.type = "Source";
  dup.make<testing::SourceNode>();
  EXPECT_THROW(r.add(dup), Error);
  NodeSpec bad;
  bad.type = "Bad";
  bad.make<testing::SourceNode>();
  bad.param_enum("e", {"x", "y"}, "z", "default not an item");
  EXPECT_THROW(r.add(bad), Error);
  EXPECT_EQ(r.closest("Sorce"), "Source");
  EXPECT_EQ(r.closest("Completely"), "");
}

}  // namespace
}  // namespace eddy
