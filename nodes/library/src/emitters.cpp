// FluidBox: a block of particles on a lattice of spacing 2r.
#include <cmath>
#include <sstream>

#include "eddy/core/io.h"
#include "eddy/core/random.h"
#include "eddy/graph/node.h"
#include "library.h"

namespace eddy::library {

namespace {

// Bytes one particle costs through a solver (state, scratch, neighbour
// lists); measured by bench/ as peak memory per particle, with headroom.
constexpr double kBytesPerParticle = 512.0;

struct Lattice {
  int64_t nx, ny, nz;
  Vec3Value origin;  // first particle
  double spacing;
  double count() const { return double(nx) * double(ny) * double(nz); }
};

Lattice lattice(const Vec3Value& center, const Vec3Value& size, double radius) {
  Lattice l;
  l.spacing = 2.0 * radius;
  int64_t* n[3] = {&l.nx, &l.ny, &l.nz};
  for (int a = 0; a < 3; ++a) {
    // Whole particles (diameter 2r) that fit along the axis, centred in it.
    const double fit = std::floor(size[a] / l.spacing + 1e-6);
    *n[a] = fit > 0 ? static_cast<int64_t>(std::min(fit, 9.0e15)) : 0;
    const double used = double(*n[a]) * l.spacing;
    l.origin[a] = center[a] - 0.5 * size[a] + 0.5 * (size[a] - used) + radius;
  }
  return l;
}

void check_count(const Lattice& l, const std::string& where, const Vec3Value& size, double radius) {
  const double count = l.count();
  const double need = count * kBytesPerParticle, have = physical_memory_bytes();
  if (count > 2.0e9 || need > have) {
    std::ostringstream m;
    m.precision(4);
    m << where << ": size [" << size[0] << ", " << size[1] << ", " << size[2] << "] m at particle_radius " << radius
      << " m makes " << count << " particles, needing about " << format_bytes(need) << " to simulate; this machine has "
      << format_bytes(have) << " (and at most 2e9 particles are supported). Raise particle_radius or shrink size.";
    throw Error(m.str());
  }
}


class FluidBoxNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const Vec3Value center = ctx.param_vec3("center"), size = ctx.param_vec3("size");
    const double r = ctx.param_float("particle_radius");
    const double jitter = ctx.param_float("jitter");
    const uint64_t seed = static_cast<uint64_t>(ctx.param_int("seed"));
    const Vec3f vel = ctx.param_vec3f("velocity");
    const Lattice l = lattice(center, size, r);
    check_count(l, ctx.where(), size, r);

    std::vector<Collider> colliders;
    for (std::size_t k = 0; k < ctx.input_count("colliders"); ++k) {
      const auto c = ctx.input<Colliders>("colliders", k);
      colliders.insert(colliders.end(), c->shapes.begin(), c->shapes.end());
    }
    Points pts(static_cast<std::size_t>(l.count()));
    pts.radius = static_cast<float>(r);
    pts.add("id", AttribType::Int);
    Vec3f* P = pts.P();
    Vec3f* v = pts.v();
    std::vector<uint8_t> keep(pts.size(), 1);
    std::size_t i = 0, culled = 0;
    for (int64_t z = 0; z < l.nz; ++z)
      for (int64_t y = 0; y < l.ny; ++y)
        for (int64_t x = 0; x < l.nx; ++x, ++i) {
          Vec3Value p{l.origin[0] + x * l.spacing, l.origin[1] + y * l.spacing, l.origin[2] + z * l.spacing};
          if (jitter > 0)
            for (int a = 0; a < 3; ++a) p[a] += jitter * l.spacing * hash_uniform(seed, i, a);
          P[i] = vec3(float(p[0]), float(p[1]), float(p[2]));
          v[i] = vel;
          // Keep one radius of clearance from every collider surface.
          for (const auto& c : colliders)
            if (collider_sdf(c, P[i], 0.0f).distance < float(r) * (1.0f - 1e-4f)) {
              keep[i] = 0;
              ++culled;
              break;
            }
        }
    if (culled) pts.filter(keep);
    int32_t* id = pts.get_int("id");
    for (std::size_t k = 0; k < pts.size(); ++k) id[k] = static_cast<int32_t>(k);
    std::ostringstream m;
    m << pts.size() << " particles (" << l.nx << " x " << l.ny << " x " << l.nz << " lattice, spacing " << l.spacing
      << " m" << (culled ? ", " + std::to_string(culled) + " inside colliders left out" : std::string()) << ")";
    ctx.info(m.str());
    ctx.output("particles", std::move(pts));
  }
};

}  // namespace

void register_emitters(Registry& r) {
  NodeSpec s("FluidBox", "Emitters",
             "A block of liquid particles on a cubic lattice of spacing 2 x particle_radius, centred in the box. "
             "Particles that would come closer than one radius to a connected collider (or sit inside it) are left "
             "out, so a block placed flush against a wall, or overlapping it, starts at rest without a blow-up. "
             "Adds an integer `id` attribute (0..n-1).");
  s.input("colliders", "colliders", "Colliders to keep clear of (optional; any number).", true, true)
      .output("particles", "points", "Particles with P, v and id; radius = particle_radius.")
      .param_vec3("center", {0.0, 0.5, 0.0}, {}, {}, "m", "Centre of the box.")
      .param_vec3("size", {1.0, 1.0, 1.0}, 0.0, {}, "m", "Edge lengths of the box.")
      .param_float("particle_radius", 0.025, 1e-4, 10.0, "m",
                   "Particle radius r; the lattice spacing (particle separation) is 2r.")
      .param_float("jitter", 0.0, 0.0, 0.5, "spacing",
                   "Random offset of each particle, as a fraction of the spacing (0: a perfect lattice).")
      .param_int("seed", 0, 0, {}, "", "Seed of the jitter.")
      .param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s", "Initial velocity of every particle.");
  s.check = [](const ParamSet& p, const CheckContext& c) {
    const Vec3Value center = std::get<Vec3Value>(p.at("center")), size = std::get<Vec3Value>(p.at("size"));
    const double r = std::get<double>(p.at("particle_radius"));
    check_count(lattice(center, size, r), c.where, size, r);
  };
  r.add(std::move(s.make<FluidBoxNode>()));
}

}  // namespace eddy::library
