#pragma once
// Small node types for exercising the graph layer without the solvers.
#include <atomic>

#include "eddy/graph/graph.h"
#include "eddy/graph/node.h"
#include "eddy/graph/registry.h"

namespace eddy::testing {

// Counts cooks per node type, to check memoisation.
inline std::atomic<int>& cook_count(const std::string& type) {
  static std::map<std::string, std::atomic<int>> counts;
  return counts[type];
}

// Source: `count` particles at x = value.
class SourceNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    cook_count("Source")++;
    Points p(std::size_t(ctx.param_int("count")));
    for (std::size_t i = 0; i < p.size(); ++i) p.P()[i] = vec3(float(ctx.param_float("value")), 0, 0);
    p.radius = 0.1f;
    ctx.output("points", std::move(p));
  }
};

// Stateful: x += step each frame, starting from the input at the start frame.
class IntegratorNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    cook_count("Integrator")++;
    // Named as the library's nodes name themselves (ctx.where() first); the
    // engine's message names the node once, with the frame.
    if (ctx.param_bool("fail") && ctx.frame() == ctx.start_frame() + 2) throw Error(ctx.where() + ": asked to fail");
    Points p = ctx.previous() ? *ctx.previous()->at("points").as<Points>() : *ctx.input<Points>("points");
    if (ctx.previous())
      for (std::size_t i = 0; i < p.size(); ++i) p.P()[i].x += float(ctx.param_float("step"));
    ctx.progress(1.0, "stepped");
    ctx.check_cancel();
    ctx.output("points", std::move(p));
  }
};

// Sums the x of every particle of every input.
class SumNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    cook_count("Sum")++;
    Points out(1);
    for (std::size_t k = 0; k < ctx.input_count("points"); ++k) {
      const auto p = ctx.input<Points>("points", k);
      for (std::size_t i = 0; i < p->size(); ++i) out.P()[0].x += p->P()[i].x;
    }
    ctx.output("points", std::move(out));
  }
};

inline void register_test_nodes(Registry& r) {
  {
    NodeSpec s;
    s.type = "Source";
    s.describe("Test", "A source.").output("points", "points", "Points.");
    s.param_int("count", 3, 0, 1000, "", "How many.").param_float("value", 1.0, -10.0, 10.0, "m", "Where.");
    r.add(std::move(s.make<SourceNode>()));
  }
  {
    NodeSpec s;
    s.type = "Integrator";
    s.stateful = true;
    s.describe("Test", "A stateful node.")
        .input("points", "points", "Start.")
        .output("points", "points", "Now.")
        .param_float("step", 1.0, {}, {}, "m", "Per frame.")
        .param_bool("fail", false, "Fail at start + 2.")
        .param_enum("mode", {"a", "b"}, "a", "An enum.");
    r.add(std::move(s.make<IntegratorNode>()));
  }
  {
    NodeSpec s;
    s.type = "Sum";
    s.describe("Test", "Sums x.")
        .input("points", "points", "Any number.", true, true)
        .input("colliders", "colliders", "Unused.", true)
        .output("points", "points", "One point.");
    r.add(std::move(s.make<SumNode>()));
  }
}

// The message parsing `text` as "g.json" throws, or "no error".
inline std::string parse_error(const std::string& text, const Registry& reg) {
  try {
    parse_graph(text, reg, "g.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace eddy::testing
