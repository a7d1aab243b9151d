#include "eddy/core/sources.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "eddy/core/error.h"
#include "eddy/core/random.h"
#include "eddy/core/reduce_ops.h"

namespace eddy {

namespace {

// Existing particles hashed by cells of the spacing: whether one lies within
// `reach` of a point.
class Occupancy {
 public:
  Occupancy(const Vec3f* p, std::size_t n, float cell) : cell_(cell) {
    for (std::size_t i = 0; i < n; ++i) cells_[key(p[i])].push_back(p[i]);
  }
  bool near(Vec3f q, float reach) const {
    const long cx = long(std::floor(q.x / cell_)), cy = long(std::floor(q.y / cell_)),
               cz = long(std::floor(q.z / cell_));
    const float r2 = reach * reach;
    for (long dz = -1; dz <= 1; ++dz)
      for (long dy = -1; dy <= 1; ++dy)
        for (long dx = -1; dx <= 1; ++dx) {
          const auto it = cells_.find(pack(cx + dx, cy + dy, cz + dz));
          if (it == cells_.end()) continue;
          for (const Vec3f& p : it->second)
            if (length2(p - q) < r2) return true;
        }
    return false;
  }
  void add(Vec3f q) { cells_[key(q)].push_back(q); }

 private:
  static uint64_t pack(long x, long y, long z) {
    return (uint64_t(x & 0x1fffff) << 42) | (uint64_t(y & 0x1fffff) << 21) | uint64_t(z & 0x1fffff);
  }
  uint64_t key(Vec3f p) const {
    return pack(long(std::floor(p.x / cell_)), long(std::floor(p.y / cell_)), long(std::floor(p.z / cell_)));
  }
  float cell_;
  std::unordered_map<uint64_t, std::vector<Vec3f>> cells_;
};

}  // namespace

std::size_t rate_total(const FluidSource& s, int frame, double fps, float radius) {
  if (frame < s.start) return 0;
  const int last = std::min(frame, s.end);
  const double d = 2.0 * radius;
  double volume = s.flow_rate * double(last - s.start + 1) / fps;
  if (s.animated_rate) {
    if (last < s.volume_first || s.volume.empty()) return 0;
    const std::size_t j = std::size_t(last - s.volume_first), n = s.volume.size();
    volume = j < n ? s.volume[j] : s.volume.back() + s.flow_rate * double(j + 1 - n) / fps;
  }
  return std::size_t(std::floor(volume / (d * d * d) + 1e-9));
}

bool source_may_set(const std::string& name) { return name != "P" && name != "v" && name != "id"; }

EmitStats emit(Points& pts, const FluidSource& s, int frame, int first, double fps, int32_t& next_id) {
  EmitStats st;
  if (frame < s.start || frame > s.end) return st;
  if (!(pts.radius > 0)) throw Error("source: the particles have no radius");
  if (s.shape.type != ShapeType::Box && s.shape.type != ShapeType::Sphere && s.shape.type != ShapeType::Grid)
    throw Error("source: the shape must be a box, a sphere or a sampled mesh");
  const float spacing = 2.0f * pts.radius;
  const float t = float((frame - first) / fps);
  std::size_t want = std::size_t(-1);
  if (!s.fill) want = rate_total(s, frame, fps, pts.radius) - rate_total(s, frame - 1, fps, pts.radius);
  if (want == 0) return st;

  // The lattice over the shape in its own frame: along each axis as many
  // sites as whole spacings fit across the shape, centred on it (a box is
  // filled as FluidBox fills it), those a radius or more inside the shape
  // taken, then jittered.
  const ColliderPose pose = collider_pose(s.shape, t);
  // The shape's bounds in its own frame.
  Vec3f lo = -s.shape.size, hi = s.shape.size;
  if (s.shape.type == ShapeType::Sphere) lo = vec3(-s.shape.size.x), hi = vec3(s.shape.size.x);
  if (s.shape.type == ShapeType::Grid) {
    lo = s.shape.grid_origin;
    hi = lo + vec3(float(s.shape.grid_dims[0] - 1), float(s.shape.grid_dims[1] - 1), float(s.shape.grid_dims[2] - 1)) *
                  s.shape.grid_dx;
  }
  const Vec3f half = (hi - lo) * 0.5f, mid = (hi + lo) * 0.5f;
  auto sites_across = [&](float h) { return std::max(1L, long(std::floor(2.0f * h / spacing + 1e-4f))); };
  const long nx = sites_across(half.x), ny = sites_across(half.y), nz = sites_across(half.z);
  if (double(nx) * double(ny) * double(nz) > 5.0e7)
    throw Error("source: its shape holds more than 50 million particle sites; use a larger particle radius");
  // A rate source fills its shape swept downstream by a frame's travel,
  // velocity / fps (`sweep`, in the shape's frame): what flows out of it
  // over a frame, the newest particles in the shape and the oldest a frame's
  // travel out of it, so that a shape thinner than that still makes an
  // unbroken stream (the particles of the frame before have moved on by as
  // much). A fill source keeps its shape alone full.
  const Vec3f sweep = s.fill ? vec3(0.0f) : mul_transpose(pose.rotation, s.velocity) * float(1.0 / fps);
  const Vec3f slo = vmin(lo, lo + sweep), shi = vmax(hi, hi + sweep);
  // Site (i, j, k) of the lattice, i in [-1, nx] (one beyond each end, for
  // a shifted phase), in the shape's frame.
  auto local_site = [&](long i, long j, long k, Vec3f phase) {
    return mid + (vec3(float(i) - 0.5f * float(nx - 1), float(j) - 0.5f * float(ny - 1), float(k) - 0.5f * float(nz - 1)) +
                  phase) *
                     spacing;
  };
  auto inside = [&](Vec3f q, float slack = 0.0f) {
    return collider_sdf(s.shape, pose.rotation * q + pose.center, t).distance <= -pts.radius * (1.0f - 1e-4f) + slack;
  };
  // Within the swept shape: inside it moved back along the sweep by some
  // share of it. Tried at steps of at most a quarter spacing, each with half
  // a step of slack: a distance changes no faster than the point moves, so
  // no stretch of the sweep deep enough inside is missed between two tries.
  const int sweep_steps = int(std::ceil(length(sweep) / (0.25f * spacing)));
  const float slack = sweep_steps ? 0.5f * length(sweep) / float(sweep_steps) : 0.0f;
  auto inside_swept = [&](Vec3f q) {
    if (inside(q)) return true;
    for (int a = 1; a <= sweep_steps; ++a)
      if (inside(q - sweep * (float(a) / float(sweep_steps)), slack)) return true;
    return false;
  };
  // A box or a sphere is filled by the centred lattice; a mesh by the one of
  // the eight half-spacing shifts that holds the most sites (the centred one
  // can leave a whole layer out at its faces).
  Vec3f phase = vec3(0.0f);
  if (s.shape.type == ShapeType::Grid) {
    long best = -1;
    for (int c = 0; c < 8; ++c) {
      const Vec3f ph = vec3(c & 1 ? 0.5f : 0.0f, c & 2 ? 0.5f : 0.0f, c & 4 ? 0.5f : 0.0f);
      long count = 0;
      for (long k = -1; k <= nz; ++k)
        for (long j = -1; j <= ny; ++j)
          for (long i = -1; i <= nx; ++i) count += inside(local_site(i, j, k, ph));
      if (count > best) best = count, phase = ph;
    }
  }
  // The lattice's index range over the swept bounds, one site beyond each
  // end (for a shifted phase): site (i, j, k) with i in [lo_i[0], hi_i[0]].
  const float mids[3] = {mid.x, mid.y, mid.z}, los[3] = {slo.x, slo.y, slo.z}, his[3] = {shi.x, shi.y, shi.z},
              phs[3] = {phase.x, phase.y, phase.z};
  const long counts[3] = {nx, ny, nz};
  long lo_i[3], hi_i[3];
  double total = 1;
  for (int a = 0; a < 3; ++a) {
    const float centre = 0.5f * float(counts[a] - 1) - phs[a];
    lo_i[a] = std::min(-1L, long(std::floor((los[a] - mids[a]) / spacing + centre)) - 1);
    hi_i[a] = std::max(counts[a], long(std::ceil((his[a] - mids[a]) / spacing + centre)) + 1);
    total *= double(hi_i[a] - lo_i[a] + 1);
  }
  if (total > 5.0e7)
    throw Error("source: its shape (swept by a frame's travel) holds more than 50 million particle sites; use a "
                "larger particle radius");
  // The particles that can be near a site: within a spacing of the swept shape's world bounds.
  Bounds3 near = empty_bounds();
  for (int c = 0; c < 8; ++c) {
    const Vec3f q = vec3(c & 1 ? shi.x : slo.x, c & 2 ? shi.y : slo.y, c & 4 ? shi.z : slo.z);
    const Vec3f p = pose.rotation * q + pose.center;
    near = {vmin(near.lo, p), vmax(near.hi, p)};
  }
  near = {near.lo - vec3(2.0f * spacing), near.hi + vec3(2.0f * spacing)};
  std::vector<Vec3f> around;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Vec3f p = pts.P()[i];
    if (p.x >= near.lo.x && p.y >= near.lo.y && p.z >= near.lo.z && p.x <= near.hi.x && p.y <= near.hi.y &&
        p.z <= near.hi.z)
      around.push_back(p);
  }
  const Occupancy existing(around.data(), around.size(), spacing);
  struct Site {
    Vec3f p;
    float upstream;
  };
  std::vector<Site> sites;
  const uint64_t salt = splitmix(uint64_t(s.seed) << 32 | uint32_t(frame));
  uint64_t index = 0;
  for (long k = lo_i[2]; k <= hi_i[2]; ++k)
    for (long j = lo_i[1]; j <= hi_i[1]; ++j)
      for (long i = lo_i[0]; i <= hi_i[0]; ++i, ++index) {
        const Vec3f q = local_site(i, j, k, phase);
        if (!inside_swept(q)) continue;
        const Vec3f site = pose.rotation * q + pose.center;
        const Vec3f p = site + pose.rotation * (vec3(float(hash_uniform(salt, index, 0)), float(hash_uniform(salt, index, 1)),
                                                     float(hash_uniform(salt, index, 2))) *
                                                (2.0f * s.jitter * spacing));
        // Jittered sites keep (1 - 2 jitter) spacings between them; to what is there, 0.9.
        if (existing.near(p, 0.9f * spacing)) continue;
        sites.push_back({p, dot(p, s.velocity)});
      }
  // Upstream first (ties in lattice order); when fewer are due than there
  // are free sites, as many spread evenly over that order, so a source below
  // its shape's capacity makes a thinner stream rather than a pulse.
  std::stable_sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) { return a.upstream < b.upstream; });
  const std::size_t n = std::min(want, sites.size());
  if (!s.fill) st.short_of = want - n;
  if (n < sites.size()) {
    std::vector<Site> spread(n);
    for (std::size_t k = 0; k < n; ++k) spread[k] = sites[(2 * k + 1) * sites.size() / (2 * n)];
    sites.swap(spread);
  }
  // The source's attributes in the particles' types, checked before anything is added.
  std::vector<SourceAttribute> given = s.attributes;
  for (SourceAttribute& a : given) {
    if (!source_may_set(a.name))
      throw Error("source: attribute '" + a.name + "' is the solver's own; a source cannot set it");
    const Points::Attribute* have = pts.find(a.name);
    if (!have || have->type == a.type) continue;
    const std::string what = "source: attribute '" + a.name + "' is " + to_string(have->type) +
                             " on the particles, the source gives a " + to_string(a.type);
    if (have->type == AttribType::Vec3 || a.type == AttribType::Vec3) throw Error(what);
    if (have->type == AttribType::Int && a.value.x != std::round(a.value.x))
      throw Error(what + " that is not whole (" + std::to_string(a.value.x) + ")");
    a.type = have->type;
  }
  if (n == 0) return st;
  Points add(n);
  add.radius = pts.radius;
  for (const auto& a : pts.attributes())
    if (a.name != "P" && a.name != "v") add.add(a.name, a.type);
  if (!add.has("v")) add.add("v", AttribType::Vec3);
  for (std::size_t i = 0; i < n; ++i) {
    add.P()[i] = sites[i].p;
    add.v()[i] = s.velocity;
  }
  if (int32_t* id = add.has("id") ? add.get_int("id") : nullptr)
    for (std::size_t i = 0; i < n; ++i) id[i] = next_id++;
  for (const SourceAttribute& a : given) {
    add.add(a.name, a.type);
    if (a.type == AttribType::Float) std::fill_n(add.get_float(a.name), n, a.value.x);
    else if (a.type == AttribType::Int) std::fill_n(add.get_int(a.name), n, int32_t(std::lround(a.value.x)));
    else std::fill_n(add.get_vec3(a.name), n, a.value);
  }
  pts.append(add);
  st.emitted = n;
  return st;
}

std::size_t kill(Points& pts, const std::vector<Collider>& sinks, float t) {
  if (sinks.empty() || pts.empty()) return 0;
  std::vector<uint8_t> keep(pts.size(), 1);
  std::size_t gone = 0;
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (const Collider& c : sinks)
      if (collider_sdf(c, pts.P()[i], t).distance < 0.0f) {
        keep[i] = 0;
        ++gone;
        break;
      }
  if (gone) pts.filter(keep);
  return gone;
}

}  // namespace eddy
