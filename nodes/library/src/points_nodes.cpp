// Particle set utilities, like Houdini's Merge and Blast on points:
// MergePoints appends particle sets, FilterPoints keeps (or removes) the
// particles whose integer attribute has a given value (one material of an
// MPM simulation, one emitter's particles).
#include <string>

#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

namespace {

class MergePointsNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    auto out = std::make_shared<Points>();
    for (std::size_t k = 0; k < ctx.input_count("points"); ++k) {
      const auto in = ctx.input<Points>("points", k);
      if (k > 0 && in->radius != out->radius && in->size() && out->size())
        ctx.warn("input " + std::to_string(k) + " has particle radius " + std::to_string(in->radius) +
                 " m, the first has " + std::to_string(out->radius) + " m; the first radius is kept");
      if (k == 0 || out->radius <= 0) out->radius = in->radius;
      out->append(*in);
    }
    // Fresh ids: the inputs' ids would repeat.
    if (out->has("id")) {
      int32_t* id = out->get_int("id");
      for (std::size_t i = 0; i < out->size(); ++i) id[i] = int32_t(i);
    }
    ctx.output_shared<Points>("points", out);
  }
};

class FilterPointsNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto in = ctx.input<Points>("points");
    const std::string& name = ctx.param_string("attribute");
    const Points::Attribute* a = in->find(name);
    if (!a) throw Error(ctx.where() + ".attribute: the input has no attribute '" + name + "'");
    if (a->type != AttribType::Int)
      throw Error(ctx.where() + ".attribute: '" + name + "' is a " + to_string(a->type) + " attribute; an int is needed");
    const int32_t value = int32_t(ctx.param_int("value"));
    const bool keep_equal = ctx.param_string("mode") == "keep";
    const int32_t* v = in->get_int(name);
    std::vector<uint8_t> keep(in->size());
    std::size_t kept = 0;
    for (std::size_t i = 0; i < in->size(); ++i) kept += keep[i] = (v[i] == value) == keep_equal;
    auto out = std::make_shared<Points>(*in);
    out->filter(keep);
    ctx.info(std::to_string(kept) + " of " + std::to_string(in->size()) + " particles kept");
    ctx.output_shared<Points>("points", out);
  }
};

}  // namespace

void register_points(Registry& r) {
  {
    NodeSpec s("MergePoints", "Points",
               "Appends any number of particle sets into one, in link order; attributes missing on one side are "
               "zero on the other. Keeps the first input's particle radius and numbers `id` afresh.");
    s.input("points", "points", "Particle sets to merge.", false, true)
        .output("points", "points", "All the particles.");
    r.add(std::move(s.make<MergePointsNode>()));
  }
  {
    NodeSpec s("FilterPoints", "Points",
               "Keeps (or removes) the particles whose integer attribute equals a value, like Houdini's Blast on a "
               "group: one material of an MPM simulation (attribute `material`: 0 water, 1 jelly, 2 snow, 3 sand), "
               "to surface each material on its own.");
    s.input("points", "points", "Particles.")
        .output("points", "points", "The particles kept, with all their attributes.")
        .param_string("attribute", "material", "Name of an integer attribute.")
        .param_int("value", 0, {}, {}, "", "The value to match.")
        .param_enum("mode", {"keep", "remove"}, "keep", "keep: the matching particles; remove: all the others.");
    r.add(std::move(s.make<FilterPointsNode>()));
  }
}

}  // namespace eddy::library
