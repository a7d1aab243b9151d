// Soft bodies and cloth: building them from meshes, and their surfaces (soft.h).
#include "eddy/core/pd/soft.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "eddy/core/error.h"
#include "eddy/core/rigid/bodies.h"  // to_vec3d, to_vec3f

namespace eddy {

namespace {

// The mesh's faces as triangles (quads split along their first diagonal).
std::vector<std::array<int32_t, 3>> triangles_of(const Mesh& m) {
  std::vector<std::array<int32_t, 3>> t = m.triangles;
  for (const auto& q : m.quads) {
    t.push_back({q[0], q[1], q[2]});
    t.push_back({q[0], q[2], q[3]});
  }
  return t;
}

// Barycentric weights of p in the tetrahedron (a, b, c, d).
std::array<double, 4> barycentric(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
  Eigen::Matrix3d D;
  D.col(0) = b - a;
  D.col(1) = c - a;
  D.col(2) = d - a;
  const Vec3d l = D.partialPivLu().solve(p - a);
  return {1.0 - l.sum(), l.x(), l.y(), l.z()};
}

}  // namespace

double SoftBodies::total_mass() const {
  double m = 0;
  for (double mi : mass) m += mi;
  return m;
}

Vec3d SoftBodies::momentum() const {
  Vec3d p = Vec3d::Zero();
  for (std::size_t i = 0; i < x.size(); ++i) p += mass[i] * v[i];
  return p;
}

void SoftBodies::append(const SoftBodies& o) {
  const auto n0 = uint32_t(x.size()), t0 = uint32_t(tets.size()), f0 = uint32_t(tris.size());
  const auto s0 = uint32_t(surface.points.size());
  for (SoftObject ob : o.objects) {
    ob.node_begin += n0, ob.node_end += n0;
    ob.tet_begin += t0, ob.tet_end += t0;
    ob.tri_begin += f0, ob.tri_end += f0;
    ob.surface_point_begin += s0, ob.surface_point_end += s0;
    objects.push_back(ob);
  }
  x.insert(x.end(), o.x.begin(), o.x.end());
  v.insert(v.end(), o.v.begin(), o.v.end());
  rest.insert(rest.end(), o.rest.begin(), o.rest.end());
  mass.insert(mass.end(), o.mass.begin(), o.mass.end());
  pinned.insert(pinned.end(), o.pinned.begin(), o.pinned.end());
  touches.insert(touches.end(), o.touches.begin(), o.touches.end());
  pin_target.insert(pin_target.end(), o.pin_target.begin(), o.pin_target.end());
  attach.insert(attach.end(), o.attach.begin(), o.attach.end());
  attach_local.insert(attach_local.end(), o.attach_local.begin(), o.attach_local.end());
  for (auto t : o.tets) {
    for (auto& i : t) i += int32_t(n0);
    tets.push_back(t);
  }
  for (auto t : o.tris) {
    for (auto& i : t) i += int32_t(n0);
    tris.push_back(t);
  }
  for (auto e : o.embed_node) {
    for (auto& i : e) i += int32_t(n0);
    embed_node.push_back(e);
  }
  embed_weight.insert(embed_weight.end(), o.embed_weight.begin(), o.embed_weight.end());
  // Slots index the points of one solver's objects: joined, they start afresh.
  contact_slots.clear();
  contact_slot_weights.clear();
  surface.points.insert(surface.points.end(), o.surface.points.begin(), o.surface.points.end());
  for (auto t : o.surface.triangles) {
    for (auto& i : t) i += int32_t(s0);
    surface.triangles.push_back(t);
  }
  for (auto q : o.surface.quads) {
    for (auto& i : q) i += int32_t(s0);
    surface.quads.push_back(q);
  }
}

namespace {
template <class F>
std::vector<Vec3d> embedded(const SoftBodies& s, F value) {
  std::vector<Vec3d> out(s.embed_node.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    Vec3d p = Vec3d::Zero();
    for (int j = 0; j < 4; ++j)
      if (s.embed_weight[k][j] != 0) p += s.embed_weight[k][j] * value(std::size_t(s.embed_node[k][j]));
    out[k] = p;
  }
  return out;
}
}  // namespace

Mesh SoftBodies::deformed_surface() const {
  Mesh m;
  m.triangles = surface.triangles;
  m.quads = surface.quads;
  const std::vector<Vec3d> p = embedded(*this, [&](std::size_t i) { return x[i]; });
  m.points.resize(p.size());
  for (std::size_t k = 0; k < p.size(); ++k) m.points[k] = to_vec3f(p[k]);
  compute_point_normals(m);
  return m;
}

std::vector<Vec3d> SoftBodies::surface_velocity() const {
  return embedded(*this, [&](std::size_t i) { return v[i]; });
}

std::size_t SoftBodies::pin_box(std::size_t o, const Vec3d& lo, const Vec3d& hi) {
  std::size_t count = 0;
  for (uint32_t i = objects.at(o).node_begin; i < objects[o].node_end; ++i) {
    if ((x[i].array() >= lo.array()).all() && (x[i].array() <= hi.array()).all()) {
      pinned[i] = 1;
      pin_target[i] = x[i];
      ++count;
    }
  }
  return count;
}

std::size_t SoftBodies::attach_to(const std::vector<Collider>& colliders, double distance, float t) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < size(); ++i) {
    if (pinned[i]) continue;
    const Vec3f p = to_vec3f(x[i]);
    for (std::size_t k = 0; k < colliders.size(); ++k) {
      if (collider_sdf(colliders[k], p, t).distance >= distance) continue;
      const ColliderPose pose = collider_pose(colliders[k], t);
      const Vec3f q = mul_transpose(pose.rotation, p - pose.center);
      pinned[i] = 1;
      pin_target[i] = x[i];
      attach[i] = int32_t(k);
      attach_local[i] = Vec3d(q.x, q.y, q.z);
      ++count;
      break;
    }
  }
  return count;
}

namespace {

// One object's node arrays, sized n and at rest at `p`.
void start_nodes(SoftBodies& s, const std::vector<Vec3d>& p) {
  s.x = p;
  s.rest = p;
  s.v.assign(p.size(), Vec3d::Zero());
  s.mass.assign(p.size(), 0.0);
  s.pinned.assign(p.size(), 0);
  s.touches.assign(p.size(), 0);
  s.pin_target = p;
  s.attach.assign(p.size(), -1);
  s.attach_local.assign(p.size(), Vec3d::Zero());
}

void check_material(const SoftMaterial& m, const std::string& name) {
  auto bad = [&](const char* what) { throw Error(name + ": " + what); };
  if (!(m.young_modulus > 0)) bad("young_modulus must be positive");
  if (!(m.poisson_ratio >= 0 && m.poisson_ratio <= 0.49)) bad("poisson_ratio must lie in [0, 0.49]");
  if (!(m.density > 0)) bad("density must be positive");
  if (!(m.thickness > 0)) bad("thickness must be positive");
  if (!(m.bend_stiffness >= 0)) bad("bend_stiffness must not be negative");
  if (!(m.strain_min > 0 && m.strain_min <= 1 && m.strain_max >= 1)) bad("strain limits must satisfy 0 < min <= 1 <= max");
  if (!(m.friction >= 0)) bad("friction must not be negative");
}

}  // namespace

SoftBodies make_cloth(const Mesh& mesh, const SoftMaterial& m, const std::string& name) {
  check_material(m, name);
  SoftBodies s;
  const auto tris = triangles_of(mesh);
  if (tris.empty()) throw Error(name + ": the cloth's mesh has no faces");
  std::vector<Vec3d> p(mesh.points.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = to_vec3d(mesh.points[i]);
  start_nodes(s, p);
  for (std::size_t f = 0; f < tris.size(); ++f) {
    const auto& t = tris[f];
    const double area = 0.5 * (p[std::size_t(t[1])] - p[std::size_t(t[0])]).cross(p[std::size_t(t[2])] - p[std::size_t(t[0])]).norm();
    if (!(area > 0))
      throw Error(name + ": face " + std::to_string(f) + " of the cloth's mesh has no area (its corners coincide or line up)");
    for (int32_t i : t) s.mass[std::size_t(i)] += m.density * m.thickness * area / 3.0;
  }
  s.tris = tris;
  s.surface.points = mesh.points;
  s.surface.triangles = mesh.triangles;
  s.surface.quads = mesh.quads;
  s.embed_node.resize(p.size());
  s.embed_weight.resize(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    s.embed_node[i] = {int32_t(i), int32_t(i), int32_t(i), int32_t(i)};
    s.embed_weight[i] = {1.0, 0.0, 0.0, 0.0};
  }
  // Points no face uses are no part of the cloth: pinned where they are,
  // with the mean mass of the others so that the system stays regular.
  const double mean = s.total_mass() / double(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    if (s.mass[i] == 0) s.pinned[i] = 1, s.mass[i] = mean;
  SoftObject ob;
  ob.name = name;
  ob.material = m;
  ob.cloth = true;
  ob.node_end = uint32_t(p.size());
  ob.tri_end = uint32_t(tris.size());
  ob.surface_point_end = uint32_t(p.size());
  s.objects.push_back(ob);
  return s;
}

SoftBodies make_soft_body(const Mesh& surface, const Collider& inside, double h, const SoftMaterial& m,
                          const std::string& name) {
  check_material(m, name);
  if (!(h > 0)) throw Error(name + ": cell_size must be positive");
  if (surface.points.empty() || surface.face_count() == 0) throw Error(name + ": the surface mesh has no faces");
  Vec3d lo = Vec3d::Constant(std::numeric_limits<double>::max()), hi = -lo;
  for (const auto& p : surface.points) {
    lo = lo.cwiseMin(to_vec3d(p));
    hi = hi.cwiseMax(to_vec3d(p));
  }
  // (a box whose side is a whole number of cells, within float round-off, takes that many)
  const Eigen::Vector3i cells = ((hi - lo) / h - Vec3d::Constant(1e-5)).array().ceil().cast<int>().cwiseMax(1);
  const double too_many = 4e6;
  if (double(cells.x()) * cells.y() * cells.z() > too_many)
    throw Error(name + ": cell_size " + std::to_string(h) + " m cuts the surface's box into more than 4 million cells");
  // Centre the lattice on the box.
  const Vec3d origin = 0.5 * (lo + hi) - 0.5 * h * cells.cast<double>();
  auto cell_index = [&](int i, int j, int k) { return (std::size_t(k) * cells.y() + j) * cells.x() + i; };
  std::vector<uint8_t> keep(std::size_t(cells.x()) * cells.y() * cells.z(), 0);
  std::size_t kept = 0;
  for (int k = 0; k < cells.z(); ++k)
    for (int j = 0; j < cells.y(); ++j)
      for (int i = 0; i < cells.x(); ++i) {
        const Vec3d c = origin + h * Vec3d(i + 0.5, j + 0.5, k + 0.5);
        const SdfSample d = collider_sdf(inside, to_vec3f(c), 0.0f);
        if (d.distance < 0) {
          keep[cell_index(i, j, k)] = 1;
          ++kept;
        }
      }
  if (kept == 0)
    throw Error(name + ": no lattice cell of " + std::to_string(h) + " m has its centre inside the surface; make cell_size smaller");

  // Nodes at the kept cells' corners.
  const int nx = cells.x() + 1, ny = cells.y() + 1;
  std::vector<int32_t> node_of(std::size_t(nx) * ny * (cells.z() + 1), -1);
  std::vector<Vec3d> p;
  auto node = [&](int i, int j, int k) {
    int32_t& id = node_of[(std::size_t(k) * ny + j) * nx + i];
    if (id < 0) {
      id = int32_t(p.size());
      p.push_back(origin + h * Vec3d(i, j, k));
    }
    return id;
  };
  // Freudenthal's six tetrahedra of a cube: along the diagonal from corner
  // 0 to corner 7, one per order of the axes.
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  SoftBodies s;
  std::vector<std::array<int32_t, 4>> tets;
  std::vector<int32_t> first_tet(keep.size(), -1);
  for (int k = 0; k < cells.z(); ++k)
    for (int j = 0; j < cells.y(); ++j)
      for (int i = 0; i < cells.x(); ++i) {
        if (!keep[cell_index(i, j, k)]) continue;
        first_tet[cell_index(i, j, k)] = int32_t(tets.size());
        for (const auto& pm : perms) {
          int c[3] = {i, j, k};
          std::array<int32_t, 4> t;
          t[0] = node(c[0], c[1], c[2]);
          for (int a = 0; a < 3; ++a) {
            ++c[pm[a]];
            t[std::size_t(a) + 1] = node(c[0], c[1], c[2]);
          }
          tets.push_back(t);
        }
      }
  start_nodes(s, p);
  // Nodes inside the surface (or on it, to the sampling's round-off) meet colliders.
  for (std::size_t i = 0; i < p.size(); ++i)
    s.touches[i] = collider_sdf(inside, to_vec3f(p[i]), 0.0f).distance <= 1e-4 * h;
  for (auto& t : tets) {
    const Vec3d &a = p[std::size_t(t[0])], &b = p[std::size_t(t[1])], &c = p[std::size_t(t[2])], &d = p[std::size_t(t[3])];
    if ((b - a).cross(c - a).dot(d - a) < 0) std::swap(t[2], t[3]);
    for (int32_t i : t) s.mass[std::size_t(i)] += h * h * h / 6.0 / 4.0;
  }
  // Masses: density times the enclosed volume (the lattice is only close to it).
  const MeshStats st = measure_mesh(surface);
  const double volume = st.volume > 0 ? st.volume : kept * h * h * h;
  const double scale = m.density * volume / (kept * h * h * h);
  for (double& mi : s.mass) mi *= scale;
  s.tets = tets;

  // Embed the surface's points.
  s.surface = surface;
  s.surface.normals.clear();
  const std::size_t np = surface.points.size();
  s.embed_node.resize(np);
  s.embed_weight.resize(np);
  for (std::size_t q = 0; q < np; ++q) {
    const Vec3d x = to_vec3d(surface.points[q]);
    Eigen::Vector3i c = ((x - origin) / h).array().floor().cast<int>();
    c = c.cwiseMax(0).cwiseMin(cells - Eigen::Vector3i::Ones());
    int32_t cell = -1;
    if (keep[cell_index(c.x(), c.y(), c.z())]) {
      cell = int32_t(cell_index(c.x(), c.y(), c.z()));
    } else {
      // The nearest kept cell's centre, searched in shells of cells around
      // c: once one is found in shell r0 (at most sqrt(3) (r0 + 1) cells
      // away), no cell beyond shell sqrt(3) (r0 + 1) + 1 can be nearer.
      double best = std::numeric_limits<double>::max();
      int found = -1;
      for (int r = 1; r <= cells.maxCoeff(); ++r) {
        if (found >= 0 && r > 1.7320508 * (found + 1) + 1) break;
        for (int k = std::max(0, c.z() - r); k <= std::min(cells.z() - 1, c.z() + r); ++k)
          for (int j = std::max(0, c.y() - r); j <= std::min(cells.y() - 1, c.y() + r); ++j)
            for (int i = std::max(0, c.x() - r); i <= std::min(cells.x() - 1, c.x() + r); ++i) {
              if (std::max({std::abs(i - c.x()), std::abs(j - c.y()), std::abs(k - c.z())}) != r) continue;
              if (!keep[cell_index(i, j, k)]) continue;
              const double d2 = (origin + h * Vec3d(i + 0.5, j + 0.5, k + 0.5) - x).squaredNorm();
              if (d2 < best) best = d2, cell = int32_t(cell_index(i, j, k));
            }
        if (cell >= 0 && found < 0) found = r;
      }
    }
    // Of the cell's six tetrahedra, the one whose smallest weight is largest
    // (inside it when the point is inside the cell).
    double best = -std::numeric_limits<double>::max();
    for (int t = first_tet[std::size_t(cell)]; t < first_tet[std::size_t(cell)] + 6; ++t) {
      const auto& T = tets[std::size_t(t)];
      const auto w = barycentric(x, p[std::size_t(T[0])], p[std::size_t(T[1])], p[std::size_t(T[2])], p[std::size_t(T[3])]);
      const double worst = *std::min_element(w.begin(), w.end());
      if (worst > best) best = worst, s.embed_node[q] = T, s.embed_weight[q] = w;
    }
  }
  SoftObject ob;
  ob.name = name;
  ob.material = m;
  ob.node_end = uint32_t(p.size());
  ob.tet_end = uint32_t(tets.size());
  ob.surface_point_end = uint32_t(np);
  s.objects.push_back(ob);
  return s;
}

}  // namespace eddy
