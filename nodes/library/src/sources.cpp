// FluidSource and KillVolume: particles added to and taken from a solver's
// liquid at the start of each frame (core/sources.h), and how a solver node
// applies them (apply_sources, called by the SolverNode skeleton); and
// ForceField, the fields every solver applies besides gravity
// (core/force_field.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "eddy/core/mpm/mpm.h"
#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

namespace {

// The shape of a source or sink node at this frame (static within it).
Collider shape_of(const CookContext& ctx) {
  Collider c;
  const std::string shape = ctx.param_string("shape");
  c.center = ctx.param_vec3f("center");
  if (shape == "box") {
    c.type = ShapeType::Box;
    c.size = ctx.param_vec3f("size") * 0.5f;
  } else if (shape == "sphere") {
    c.type = ShapeType::Sphere;
    c.size = vec3(float(ctx.param_float("radius")));
  } else if (shape == "mesh") {
    c.type = ShapeType::Grid;  // sampled by the caller
  } else {
    c.type = ShapeType::Plane;
    const Vec3f n = ctx.param_vec3f("normal");
    if (length(n) < 1e-9f) throw Error(ctx.where() + ": parameter 'normal' is the zero vector; expected a direction");
    c.rotation = rotation_y_to(n);
  }
  return c;
}

// A source's attributes from its `material` and `attributes` parameters:
// "name=value" items between spaces or semicolons, a whole number giving an
// int, a decimal a float, three numbers between commas a vec3. Throws
// eddy::Error naming the parameter (`where` is the node) and the item.
std::vector<SourceAttribute> source_attributes(const std::string& material, const std::string& text,
                                               const std::string& where) {
  std::vector<SourceAttribute> out;
  const std::string at = where + ".params.attributes: ";
  auto number = [&](const std::string& item, const std::string& v) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x))
      throw Error(at + "'" + item + "': '" + v + "' is not a number");
    return float(x);
  };
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ';', ' ');
  std::istringstream items(spaced);
  for (std::string item; items >> item;) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(at + "'" + item + "' is not name=value (e.g. temperature=300.5 or Cd=1,0.5,0)");
    SourceAttribute a;
    a.name = item.substr(0, eq);
    const bool ident = (std::isalpha(static_cast<unsigned char>(a.name[0])) || a.name[0] == '_') &&
                       std::all_of(a.name.begin(), a.name.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                       });
    if (!ident) throw Error(at + "'" + a.name + "' is not an attribute name (letters, digits and _)");
    const std::string v = item.substr(eq + 1);
    const std::size_t c1 = v.find(',');
    if (c1 != std::string::npos) {
      const std::size_t c2 = v.find(',', c1 + 1);
      if (c2 == std::string::npos || v.find(',', c2 + 1) != std::string::npos)
        throw Error(at + "'" + item + "': a vector takes three numbers");
      a.type = AttribType::Vec3;
      a.value = vec3(number(item, v.substr(0, c1)), number(item, v.substr(c1 + 1, c2 - c1 - 1)),
                     number(item, v.substr(c2 + 1)));
    } else {
      a.value = vec3(number(item, v), 0.0f, 0.0f);  // a number: digits, a sign, maybe . e E
      a.type = v.find_first_of(".eE") == std::string::npos ? AttribType::Int : AttribType::Float;
      if (a.type == AttribType::Int && std::fabs(a.value.x) > 16777216.0f)  // held as a float
        throw Error(at + "'" + item + "': a whole number beyond 2^24 is not held exactly; give it as a float");
    }
    for (const auto& b : out)
      if (b.name == a.name) throw Error(at + "'" + a.name + "' is given twice");
    out.push_back(a);
  }
  if (material != "none") {
    for (const auto& b : out)
      if (b.name == "material")
        throw Error(at + "'material' is given here and by the material parameter; give it once");
    SourceAttribute m;
    m.name = "material";
    m.type = AttribType::Int;
    m.value = vec3(float(int(mpm_material_from_name(material, where + ".params.material"))), 0.0f, 0.0f);
    out.insert(out.begin(), m);
  }
  for (const auto& b : out)
    if (!source_may_set(b.name)) throw Error(at + "'" + b.name + "' is the solver's own; a source cannot set it");
  return out;
}

class FluidSourceNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    FluidSource s;
    s.shape = shape_of(ctx);
    Sources out;
    if (s.shape.type == ShapeType::Grid) {
      if (ctx.input_count("mesh") == 0) throw Error(ctx.where() + ": shape 'mesh' needs a closed mesh linked into 'mesh'");
      out.grids.push_back(samples_.sample(ctx, ctx.input<Mesh>("mesh"), ctx.param_float("voxel_size"), s.shape));
    }
    s.fill = ctx.param_string("mode") == "fill";
    s.flow_rate = ctx.param_float("flow_rate");
    s.velocity = ctx.param_vec3f("velocity");
    s.start = int(ctx.param_int("start"));
    s.end = int(ctx.param_int("end"));
    s.jitter = float(ctx.param_float("jitter"));
    s.seed = uint32_t(ctx.param_int("seed"));
    s.attributes = source_attributes(ctx.param_string("material"), ctx.param_string("attributes"), ctx.where());
    if (s.end < s.start)
      throw Error(ctx.where() + ": end " + std::to_string(s.end) + " is before start " + std::to_string(s.start));
    if (!s.fill && ctx.animated("flow_rate")) {
      // The rate over every frame's emission, not at the frame's start: the
      // volume each frame emits is the rate's integral over it (Simpson's
      // rule on eighths of a frame: exact for keys on whole frames, linear or
      // smooth, whose pieces are cubic between frames).
      s.animated_rate = true;
      s.volume_first = std::max(s.start, ctx.start_frame());
      double total = 0;
      for (int k = s.volume_first; k <= std::min(s.end, ctx.frame()); ++k) {
        double sum = 0;
        for (int i = 0; i <= 8; ++i)
          sum += (i == 0 || i == 8 ? 1.0 : i % 2 ? 4.0 : 2.0) * ctx.param_float_at("flow_rate", k + i / 8.0);
        total += sum / 24.0 / ctx.fps();  // h / 3 with h an eighth of a frame, in seconds
        s.volume.push_back(total);
      }
    }
    out.list.push_back(s);
    out.particle_radius = float(ctx.param_float("particle_radius"));
    ctx.output("sources", std::move(out));
  }

 private:
  MeshShapeCache samples_;
};

class ForceFieldNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    ForceField f;
    const std::string type = ctx.param_string("type");
    f.type = int32_t(type == "uniform" ? FieldType::Uniform : type == "vortex" ? FieldType::Vortex : FieldType::Drag);
    f.vector = ctx.param_vec3f("vector");
    f.center = ctx.param_vec3f("center");
    const Vec3f axis = ctx.param_vec3f("axis");
    if (f.type == int32_t(FieldType::Vortex) && length(axis) < 1e-9f)
      throw Error(ctx.where() + ": parameter 'axis' is the zero vector; a vortex needs a direction");
    f.axis = normalize_or(axis, vec3(0.0f, 1.0f, 0.0f));
    f.strength = float(ctx.param_float("strength"));
    f.radius = float(ctx.param_float("radius"));
    f.falloff = std::min(float(ctx.param_float("falloff")), f.radius);
    ForceFields out;
    out.list.push_back(f);
    ctx.output("forces", std::move(out));
  }
};

class KillVolumeNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    Sinks out;
    out.shapes.push_back(shape_of(ctx));
    ctx.output("sinks", std::move(out));
  }
};

NodeSpec& placed_shape(NodeSpec& s, std::vector<std::string> shapes, const char* doc) {
  return s.param_enum("shape", shapes, shapes.front(), doc)
      .param_vec3("center", {0.0, 0.5, 0.0}, {}, {}, "m", "Centre of the box or sphere (a point on the plane).")
      .param_vec3("size", {0.2, 0.2, 0.2}, 0.0, {}, "m", "Box edge lengths.")
      .param_float("radius", 0.1, 0.0, {}, "m", "Sphere radius.");
}

}  // namespace

bool apply_sources(const CookContext& ctx, Points& pts) {
  const std::size_t ns = ctx.input_count("sources"), nk = ctx.input_count("sinks");
  if (ns == 0 && nk == 0) return false;
  const int frame = ctx.frame() - 1;  // the frame whose step follows
  const float t = float((frame - ctx.start_frame()) / ctx.fps());
  std::vector<Collider> sinks;
  for (std::size_t k = 0; k < nk; ++k) {
    const auto s = ctx.input<Sinks>("sinks", k);
    sinks.insert(sinks.end(), s->shapes.begin(), s->shapes.end());
  }
  const std::size_t removed = kill(pts, sinks, t);
  int32_t next_id = 0;
  if (const int32_t* id = pts.get_int("id"))
    for (std::size_t i = 0; i < pts.size(); ++i) next_id = std::max(next_id, id[i] + 1);
  EmitStats total;
  for (std::size_t k = 0; k < ns; ++k) {
    const auto src = ctx.input<Sources>("sources", k);
    if (std::fabs(src->particle_radius - pts.radius) > 1e-6f * pts.radius)
      throw Error("input 'sources' [" + std::to_string(k) + "] makes particles of radius " +
                  std::to_string(src->particle_radius) + " m, the liquid's are " + std::to_string(pts.radius) +
                  " m; they must agree");
    for (const FluidSource& s : src->list) {
      const EmitStats st = emit(pts, s, frame, ctx.start_frame(), ctx.fps(), next_id);
      total.emitted += st.emitted;
      total.short_of += st.short_of;
    }
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "sources emitted %zu particles, sinks removed %zu", total.emitted, removed);
  std::string line = buf;
  if (total.short_of)
    line += "; " + std::to_string(total.short_of) + " particles due found no free site (a source is full: "
            "make it larger, or its velocity carry them out faster)";
  ctx.info(line);
  return removed > 0 || total.emitted > 0;
}

void register_sources(Registry& r) {
  NodeSpec s("FluidSource", "Sources",
             "Adds liquid over time, at the start of each frame of a solver it is linked into (`sources`): particles "
             "on a lattice of spacing 2 particle_radius (jittered) inside a box, a sphere or a closed mesh, at sites no "
             "particle is "
             "nearer to than 0.9 spacings, moving at `velocity`. rate: flow_rate m^3/s leaves it ((2r)^3 per "
             "particle) into the shape swept downstream by a frame's travel (velocity / fps), what flows out of it "
             "over a frame, so that even a thin nozzle makes an unbroken stream; a rate below what that holds "
             "spreads evenly over it. fill: every free site of the shape, every frame. Active from `start` to `end` "
             "(frames).");
  s.input("mesh", "mesh", "A closed mesh, for shape 'mesh' (its own coordinates, moved by `center`).", true)
      .output("sources", "sources", "The source, for a solver's `sources` input.");
  placed_shape(s, {"box", "sphere", "mesh"}, "The source's shape.")
      .param_float("voxel_size", 0.0, 0.0, {}, "m",
                   "mesh: the spacing its inside is sampled at (0: 1/64 of its largest extent).")
      .param_enum("mode", {"rate", "fill"}, "rate", "rate: emit flow_rate; fill: refill the shape where it is empty.")
      .param_float("flow_rate", 0.02, 0.0, 1.0e6, "m^3/s",
                   "Volume emitted per second (rate). Animated, each frame emits its integral over the frame.")
      .param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s", "Velocity of the particles made.")
      .param_float("particle_radius", 0.01, 0.0001, 10.0, "m",
                   "Radius of the particles made; must equal the liquid's.")
      .param_int("start", 1, -1000000000, 1000000000, "", "First frame it emits for.")
      .param_int("end", 1000000000, -1000000000, 1000000000, "", "Last frame it emits for.")
      .param_float("jitter", 0.05, 0.0, 0.25, "spacings", "Random offset of each site, up to this much per axis.")
      .param_int("seed", 0, 0, 2147483647, "", "Seed of the jitter.")
      .param_enum("material", {"none", "water", "jelly", "snow", "sand"}, "none",
                  "Sets the int attribute `material` of the particles made to this MPM material, for an MPMSolver "
                  "whose material is from_attribute (none: leave it out).")
      .param_string("attributes", "",
                    "Further attributes of the particles made, as name=value items between spaces: a whole "
                    "number gives an int, a decimal a float, three numbers between commas a vector, e.g. "
                    "`temperature=300.5 Cd=1,0.5,0`. Particles already there without them get 0.");
  s.check = [](const ParamSet& p, const CheckContext& c) {
    source_attributes(std::get<std::string>(p.at("material")), std::get<std::string>(p.at("attributes")), c.where);
  };
  r.add(std::move(s.make<FluidSourceNode>()));

  NodeSpec k("KillVolume", "Sources",
             "Removes a solver's particles inside a box or sphere, or below a plane (through `center`, facing "
             "`normal`), at the start of each frame of a solver it is linked into (`sinks`); the solver's report "
             "counts them.");
  k.output("sinks", "sinks", "The kill volume, for a solver's `sinks` input.");
  placed_shape(k, {"box", "sphere", "plane"}, "The volume's shape.")
      .param_vec3("normal", {0.0, 1.0, 0.0}, {}, {}, "", "Plane: the side kept (particles below are removed).");
  r.add(std::move(k.make<KillVolumeNode>()));

  NodeSpec f("ForceField", "Sources",
             "A force every solver it is linked into (`forces`) applies besides gravity, as an acceleration at each "
             "particle (MPM: each grid node; bodies: each centre of mass). uniform: `vector` m/s^2 (wind, a gust); "
             "vortex: `strength` m/s^2 around `axis` through `center`, right-handed (a swirl); drag: towards the "
             "velocity `vector` at the rate `strength` 1/s. With a `radius`, it acts within it, fading to nothing "
             "over the outer `falloff`. Every parameter can be animated (read each frame).");
  f.output("forces", "forces", "The field, for a solver's `forces` input.")
      .param_enum("type", {"uniform", "vortex", "drag"}, "uniform", "What the field does.")
      .param_vec3("vector", {1.0, 0.0, 0.0}, {}, {}, "m/s^2 or m/s", "uniform: the acceleration; drag: the velocity "
                  "particles are pulled towards.")
      .param_vec3("center", {0.0, 0.0, 0.0}, {}, {}, "m", "vortex: a point on its axis; the region's centre.")
      .param_vec3("axis", {0.0, 1.0, 0.0}, {}, {}, "", "vortex: the axis it turns about.")
      .param_float("strength", 1.0, {}, {}, "m/s^2 or 1/s", "vortex: the tangential acceleration; drag: the rate.")
      .param_float("radius", 0.0, 0.0, {}, "m", "0: everywhere; otherwise the region's radius around center.")
      .param_float("falloff", 0.0, 0.0, {}, "m", "Width of the region's outer shell over which it fades out.");
  r.add(std::move(f.make<ForceFieldNode>()));
}

}  // namespace eddy::library
