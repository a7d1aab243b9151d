// Graph files and --set values from elsewhere: the loader, the validator
// and the writer over a registry whose nodes take every kind of parameter
// and socket. parse_graph and apply_override return or throw eddy::Error;
// a graph that loads writes out and loads again to the same graph.
#include <cstddef>
#include <cstdint>
#include <string>

#include "eddy/core/error.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/node.h"
#include "eddy/graph/registry.h"

namespace {

class Nothing final : public eddy::Node {
 public:
  void cook(eddy::CookContext&) override {}
};

const eddy::Registry& registry() {
  static const eddy::Registry* r = [] {
    auto* reg = new eddy::Registry;
    eddy::NodeSpec a("Make", "Fuzz", "Every kind of parameter.");
    a.output("points", "points", "Out.")
        .param_int("count", 3, 0, 1000, "", "An integer.")
        .param_float("value", 1.0, -10.0, 10.0, "m", "A float.")
        .param_bool("flag", false, "A flag.")
        .param_vec3("at", {0.0, 0.0, 0.0}, -100.0, 100.0, "m", "A vector.")
        .param_string("name", "x", "A string.")
        .param_enum("mode", {"a", "b", "c"}, "a", "An enum.")
        .param_path("path", "$OS/x.$F4.ply", "A path.");
    reg->add(std::move(a.make<Nothing>()));
    eddy::NodeSpec b("Take", "Fuzz", "Single, optional and multi inputs.");
    b.input("points", "points", "One.")
        .input("more", "points", "Any number.", true, true)
        .input("colliders", "colliders", "Optional.", true)
        .output("points", "points", "Out.")
        .output("colliders", "colliders", "Out.");
    reg->add(std::move(b.make<Nothing>()));
    return reg;
  }();
  return *r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const eddy::Graph g = eddy::parse_graph(text, registry(), "fuzz.eddy.json");
    const std::string out = eddy::graph_to_json(g, registry());
    const eddy::Graph h = eddy::parse_graph(out, registry(), "rewritten");
    if (eddy::graph_to_json(h, registry()) != out) __builtin_trap();  // the writer's output must round-trip
  } catch (const eddy::Error&) {
  }
  // The same bytes as a --set override of a graph that has one node of each type.
  static const eddy::Graph base = eddy::parse_graph(
      R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 2], "nodes": [{"id": "m", "type": "Make"},
          {"id": "t", "type": "Take"}], "links": [{"from": "m.points", "to": "t.points"}]})",
      registry(), "base");
  try {
    eddy::Graph g = base;
    eddy::apply_override(g, registry(), text);
    eddy::validate_graph(g, registry(), eddy::ValidateOptions{false});
  } catch (const eddy::Error&) {
  }
  return 0;
}
