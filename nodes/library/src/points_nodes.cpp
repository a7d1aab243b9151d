// Particle set utilities, like Houdini's Merge, Blast and Transform:
// MergePoints appends particle sets, FilterPoints keeps (or removes) the
// particles whose integer attribute has a given value (one material of an
// MPM simulation, one emitter's particles), Transform moves, turns and
// scales particles and meshes, TimeShift passes them on from another frame,
// Switch passes on one of several.
#include <algorithm>
#include <cmath>
#include <string>

#include "eddy/core/mat3.h"
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

// p' = R S (p - pivot) + pivot + translate, R from Euler degrees (X, then
// Y, then Z, as the colliders' `rotate`), S = scale x uniform_scale.
class TransformNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const Mat3f R = rotation_from_euler_degrees(ctx.param_vec3f("rotate"));
    const Vec3f s = ctx.param_vec3f("scale") * float(ctx.param_float("uniform_scale"));
    const Mat3f M = R * mat3_diag(s);
    const Vec3f pivot = ctx.param_vec3f("pivot"), move = ctx.param_vec3f("translate");
    auto place = [&](Vec3f p) { return M * (p - pivot) + pivot + move; };
    const float det = s.x * s.y * s.z;
    if (det == 0.0f) throw Error(ctx.where() + ": a zero scale flattens the geometry; scale and uniform_scale must be nonzero");
    if (ctx.input_count("points")) {
      auto out = std::make_shared<Points>(*ctx.input<Points>("points"));
      for (std::size_t i = 0; i < out->size(); ++i) out->P()[i] = place(out->P()[i]);
      // Velocities turn and stretch with the points; the radius with the volume.
      if (Vec3f* v = out->get_vec3("v"))
        for (std::size_t i = 0; i < out->size(); ++i) v[i] = M * v[i];
      out->radius *= std::cbrt(std::fabs(det));
      ctx.output_shared<Points>("points", out);
    } else {
      ctx.output("points", Points{});
    }
    if (ctx.input_count("mesh")) {
      Mesh m = *ctx.input<Mesh>("mesh");
      for (Vec3f& p : m.points) p = place(p);
      // Normals by the inverse transpose, R S^-1, made unit again.
      const Mat3f N = R * mat3_diag(vec3(1.0f / s.x, 1.0f / s.y, 1.0f / s.z));
      for (Vec3f& n : m.normals) n = normalize_or(N * n, n);
      for (Vec3f& v : m.velocities) v = M * v;  // as the points' v above
      if (det < 0.0f) flip_winding(m);  // a mirror turns the faces inside out
      ctx.output("mesh", std::move(m));
    } else {
      ctx.output("mesh", Mesh{});
    }
  }
};

// Passes on link min(k, count - 1) of each of the points and mesh inputs
// (an empty value where none is linked): Switch and TimeShift.
void pass_on(CookContext& ctx, int64_t k) {
  for (const char* socket : {"points", "mesh"}) {
    const std::size_t n = ctx.input_count(socket);
    if (n) ctx.set_output(socket, ctx.input_value(socket, std::size_t(std::min<int64_t>(k, int64_t(n) - 1))));
    else if (std::string(socket) == "points") ctx.output(socket, Points{});
    else ctx.output(socket, Mesh{});
  }
}

// The points and mesh inputs (optional; `multi`: any number of links) and
// outputs of the nodes that take both; `what` completes their docs.
NodeSpec& points_and_mesh(NodeSpec& s, bool multi, const std::string& what) {
  return s.input("points", "points", "Particles " + what + " (optional).", true, multi)
      .input("mesh", "mesh", "Meshes " + what + " (optional).", true, multi)
      .output("points", "points", "The particles (empty when none are linked).")
      .output("mesh", "mesh", "The mesh (empty when none is linked).");
}

// The frame a TimeShift reads its inputs at, for `frame`.
int shifted_frame(const ParamSet& p, int frame) {
  if (std::get<std::string>(p.at("mode")) == "hold") return int(std::get<int64_t>(p.at("frame")));
  const int64_t f = int64_t(frame) + std::get<int64_t>(p.at("offset"));
  return int(std::clamp<int64_t>(f, -1000000000, 1000000000));
}

// Its inputs are cooked at the shifted frame by the engine (spec.input_frame):
// it passes them on.
class TimeShiftNode final : public Node {
 public:
  void cook(CookContext& ctx) override { pass_on(ctx, 0); }
};

// The input-th link of each socket (the last when there are fewer).
class SwitchNode final : public Node {
 public:
  void cook(CookContext& ctx) override { pass_on(ctx, ctx.param_int("input")); }
};

}  // namespace

void register_points(Registry& r) {
  {
    NodeSpec s("Switch", "Points",
               "Passes on one of its inputs, chosen by `input` (0: the first link; past the last: the last), for "
               "particles and meshes alike (Houdini's Switch); `input` can be animated to cut between takes.");
    points_and_mesh(s, true, "to choose from").param_int("input", 0, 0, 1000000, "", "Which link to pass on, from 0.");
    r.add(std::move(s.make<SwitchNode>()));
  }
  {
    NodeSpec s("TimeShift", "Points",
               "Passes on its inputs as they are at another frame (Houdini's Time Shift): offset: frame + offset; "
               "hold: always `frame` (a still of a simulation, a frozen splash). A solver upstream is cooked up "
               "to that frame.");
    points_and_mesh(s, false, "to pass on from the shifted frame")
        .param_enum("mode", {"offset", "hold"}, "offset", "offset: frame + offset; hold: always `frame`.")
        .param_int("offset", -1, -1000000, 1000000, "frames", "offset: frames to shift by (negative: earlier).")
        .param_int("frame", 1, -1000000000, 1000000000, "", "hold: the frame held.");
    s.input_frame = shifted_frame;
    r.add(std::move(s.make<TimeShiftNode>()));
  }
  {
    NodeSpec s("Transform", "Points",
               "Moves, turns and scales particles and meshes (Houdini's Transform SOP): p' = R S (p - pivot) + pivot "
               "+ translate, R from Euler angles in degrees (X, then Y, then Z), S = scale x uniform_scale. "
               "Particle velocities turn and stretch with them and their radius scales with the volume's cube "
               "root; mesh normals follow (a mirroring scale flips the faces). Each parameter can be animated.");
    points_and_mesh(s, false, "to transform")
        .param_vec3("translate", {0, 0, 0}, {}, {}, "m", "Translation, applied last.")
        .param_vec3("rotate", {0, 0, 0}, {}, {}, "degrees", "Euler angles about X, then Y, then Z.")
        .param_vec3("scale", {1, 1, 1}, {}, {}, "", "Scale along each axis (nonzero).")
        .param_float("uniform_scale", 1.0, {}, {}, "", "A scale on every axis (nonzero).")
        .param_vec3("pivot", {0, 0, 0}, {}, {}, "m", "The point rotation and scale are about.");
    s.check = [](const ParamSet& p, const CheckContext& c) {
      const auto sc = std::get<Vec3Value>(p.at("scale"));
      if (sc[0] == 0 || sc[1] == 0 || sc[2] == 0 || std::get<double>(p.at("uniform_scale")) == 0)
        throw Error(c.where + ".params: a zero scale flattens the geometry; scale and uniform_scale must be nonzero");
    };
    r.add(std::move(s.make<TransformNode>()));
  }
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
