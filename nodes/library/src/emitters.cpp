// The emitters that make particles from nothing but their parameters or a
// shape: FluidBox (a block on a lattice of spacing 2r) and ParticlesFromMesh
// (a closed mesh filled: a jelly bunny, a snowball).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "eddy/core/io.h"
#include "eddy/core/mat3.h"
#include "eddy/core/mesh.h"
#include "eddy/core/mesh_sdf.h"
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

// Refuses `count` particles beyond what this machine can simulate (2e9,
// or more solver memory than it has): `what` says where they come from,
// `fix` what to change.
void check_count(double count, const std::string& where, const std::string& what, const char* fix) {
  const double need = count * kBytesPerParticle, have = physical_memory_bytes();
  if (count > 2.0e9 || need > have) {
    std::ostringstream m;
    m.precision(4);
    m << where << ": " << what << " makes " << count << " particles, needing about " << format_bytes(need)
      << " to simulate; this machine has " << format_bytes(have) << " (and at most 2e9 particles are supported). "
      << fix;
    throw Error(m.str());
  }
}

void check_count(const Lattice& l, const std::string& where, const Vec3Value& size, double radius) {
  std::ostringstream what;
  what.precision(4);
  what << "size [" << size[0] << ", " << size[1] << ", " << size[2] << "] m at particle_radius " << radius << " m";
  check_count(l.count(), where, what.str(), "Raise particle_radius or shrink size.");
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

class FromMeshNode final : public Node {
 public:
  void cook(CookContext& ctx) override {
    const auto mesh = ctx.input<Mesh>("mesh");
    require_closed(*mesh, ctx.where() + ": input 'mesh'");
    const double r = ctx.param_float("particle_radius");
    const Vec3f center = ctx.param_vec3f("center"), vel = ctx.param_vec3f("velocity");
    const Bounds3 bounds = mesh_bounds(*mesh);
    const Vec3f lo = bounds.lo, hi = bounds.hi;
    const double spacing = 2.0 * r;
    int64_t n[3];
    double count = 1;
    for (int a = 0; a < 3; ++a) {
      n[a] = int64_t(std::floor((at(hi, a) - at(lo, a)) / spacing)) + 1;
      count *= double(n[a]);
    }
    std::ostringstream what;
    what.precision(4);
    what << "particle_radius " << r << " m in the mesh's bounding box";
    check_count(count, ctx.where(), what.str(), "Raise particle_radius.");
    // The mesh's signed distance, sampled at half the spacing, decides inside.
    const SampledSdf sdf = mesh_to_sdf(*mesh, r, 2.0 * r, ctx.threads());
    const Collider c = grid_collider(sdf);
    Points pts;
    pts.radius = float(r);
    std::vector<Vec3f> inside;
    const Vec3f start = (lo + hi) * 0.5f - vec3(float((n[0] - 1) * spacing), float((n[1] - 1) * spacing),
                                                float((n[2] - 1) * spacing)) * 0.5f;
    for (int64_t z = 0; z < n[2]; ++z)
      for (int64_t y = 0; y < n[1]; ++y)
        for (int64_t x = 0; x < n[0]; ++x) {
          const Vec3f p = start + vec3(float(x * spacing), float(y * spacing), float(z * spacing));
          if (collider_sdf(c, p, 0.0f).distance < 0.0f) inside.push_back(p + center);
        }
    pts.resize(inside.size());
    pts.add("id", AttribType::Int);
    for (std::size_t i = 0; i < inside.size(); ++i) {
      pts.P()[i] = inside[i];
      pts.v()[i] = vel;
      pts.get_int("id")[i] = int32_t(i);
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "%zu particles inside the mesh (spacing %.4g m)", pts.size(), spacing);
    ctx.info(buf);
    ctx.output("particles", std::move(pts));
  }
};

}  // namespace

void register_emitters(Registry& r) {
  {
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
  {
    NodeSpec s("ParticlesFromMesh", "Emitters",
               "Fills a closed mesh (from ReadMesh) with particles on a cubic lattice of spacing 2 x particle_radius: "
               "the lattice points inside the mesh, decided by its signed distance. Adds `id`.");
    s.input("mesh", "mesh", "A closed mesh.")
        .output("particles", "points", "Particles with P, v and id; radius = particle_radius.")
        .param_vec3("center", {0.0, 0.0, 0.0}, {}, {}, "m", "Offset added to the mesh's positions.")
        .param_float("particle_radius", 0.01, 1e-4, 10.0, "m", "Particle radius r; the lattice spacing is 2r.")
        .param_vec3("velocity", {0.0, 0.0, 0.0}, {}, {}, "m/s", "Initial velocity of every particle.");
    r.add(std::move(s.make<FromMeshNode>()));
  }
}

}  // namespace eddy::library
