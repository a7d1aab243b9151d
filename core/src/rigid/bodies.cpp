// Mass properties of the body shapes, the bodies' bookkeeping, and the
// torque-free rotation step.
#include "eddy/core/rigid/bodies.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <unordered_set>

#include "eddy/core/error.h"

namespace eddy {

namespace {

constexpr double kPi = std::numbers::pi;

Mat3d diagonal(double a, double b, double c) { return Vec3d(a, b, c).asDiagonal(); }

}  // namespace

MassProperties mass_properties(const BodyGeometry& g, double density) {
  MassProperties m;
  switch (g.shape) {
    case BodyShape::Box: {
      const Vec3d e = 2.0 * g.half;  // edges
      m.mass = density * e.x() * e.y() * e.z();
      m.inertia = diagonal(e.y() * e.y() + e.z() * e.z(), e.x() * e.x() + e.z() * e.z(),
                           e.x() * e.x() + e.y() * e.y()) *
                  (m.mass / 12.0);
      break;
    }
    case BodyShape::Sphere: {
      const double r = g.radius;
      m.mass = density * 4.0 / 3.0 * kPi * r * r * r;
      m.inertia = Mat3d::Identity() * (0.4 * m.mass * r * r);
      break;
    }
    case BodyShape::Capsule: {
      // A cylinder of length l = 2 half_height along y and two hemispherical
      // caps, each centred 3r/8 beyond its end of the cylinder.
      const double r = g.radius, l = 2.0 * g.half_height;
      const double mc = density * kPi * r * r * l;
      const double ms = density * 4.0 / 3.0 * kPi * r * r * r;  // both caps
      m.mass = mc + ms;
      const double axial = 0.5 * mc * r * r + 0.4 * ms * r * r;
      const double across = mc * (l * l / 12.0 + r * r / 4.0) + ms * (0.4 * r * r + l * l / 4.0 + 3.0 * l * r / 8.0);
      m.inertia = diagonal(across, axial, across);
      break;
    }
    case BodyShape::Mesh:
      if (!g.mesh) throw Error("a mesh body without its mesh");
      m = mesh_mass_properties(g.mesh->mesh, density);
      break;
  }
  return m;
}

MassProperties mesh_mass_properties(const Mesh& mesh, double density) {
  // Each face (a, b, c) with the origin spans a tetrahedron of signed volume
  // a . (b x c) / 6, centroid (a + b + c) / 4 and second moment
  // int x x^T dV = V / 20 (a a^T + b b^T + c c^T + s s^T), s = a + b + c.
  double volume = 0;
  Vec3d first = Vec3d::Zero();
  Mat3d second = Mat3d::Zero();
  auto P = [&](int32_t i) {
    return to_vec3d(mesh.points[std::size_t(i)]);
  };
  auto tet = [&](const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const double v = a.dot(b.cross(c)) / 6.0;
    const Vec3d s = a + b + c;
    volume += v;
    first += v * s / 4.0;
    second += v / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
  };
  for (const auto& t : mesh.triangles) tet(P(t[0]), P(t[1]), P(t[2]));
  for (const auto& q : mesh.quads) {
    tet(P(q[0]), P(q[1]), P(q[2]));
    tet(P(q[0]), P(q[2]), P(q[3]));
  }
  if (!(volume > 0))
    throw Error("the mesh encloses no positive volume (" + std::to_string(volume) +
                " m^3): it must be closed and wound outward");
  MassProperties m;
  m.mass = density * volume;
  m.com = first / volume;
  // Second moment about the centre of mass, then I = tr(C) 1 - C.
  const Mat3d c = density * (second - volume * m.com * m.com.transpose());
  m.inertia = Mat3d::Identity() * c.trace() - c;
  return m;
}

void BodyMesh::finish(double sample_spacing) {
  grid = grid_collider(sdf);
  spacing = sample_spacing;
  lo = Vec3d::Constant(1e300);
  hi = Vec3d::Constant(-1e300);
  reach = 0;
  for (const Vec3f& p : mesh.points) {
    const Vec3d d = to_vec3d(p);
    lo = lo.cwiseMin(d);
    hi = hi.cwiseMax(d);
    reach = std::max(reach, d.norm());
  }
  // The corners first, then points along each edge at most `spacing` apart;
  // one kept per cell of `spacing` (the first that falls in it, so a corner
  // wins over an edge point beside it).
  samples.clear();
  std::unordered_set<uint64_t> taken;
  const Eigen::Array3d cells = ((hi - lo) / spacing).array().floor() + 1.0;
  auto keep = [&](const Vec3d& p) {
    const Eigen::Array3d c = ((p - lo) / spacing).array().floor().min(cells - 1.0);
    const uint64_t key = uint64_t((c.z() * cells.y() + c.y()) * cells.x() + c.x());
    if (taken.insert(key).second) samples.push_back(p);
  };
  for (const Vec3f& p : mesh.points) keep(to_vec3d(p));
  auto edge = [&](int32_t a, int32_t b) {
    if (a > b) return;  // each edge of a closed mesh is met twice, once each way
    const Vec3d pa = to_vec3d(mesh.points[std::size_t(a)]), pb = to_vec3d(mesh.points[std::size_t(b)]);
    const int n = int(std::ceil((pb - pa).norm() / spacing));
    for (int k = 1; k < n; ++k) keep(pa + (pb - pa) * (double(k) / n));
  };
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) edge(t[std::size_t(k)], t[std::size_t((k + 1) % 3)]);
  for (const auto& q : mesh.quads)
    for (int k = 0; k < 4; ++k) edge(q[std::size_t(k)], q[std::size_t((k + 1) % 4)]);
}

BodyMeshPlacement body_mesh(const Mesh& mesh, double voxel_size, int threads) {
  if (!(voxel_size > 0) || !std::isfinite(voxel_size)) throw Error("a mesh body's voxel size must be positive");
  require_closed(mesh, "the mesh");
  const MassProperties m = mesh_mass_properties(mesh, 1.0);
  // Principal axes: the eigenvectors of the inertia tensor, a right-handed frame.
  Eigen::SelfAdjointEigenSolver<Mat3d> eig(m.inertia);
  Mat3d axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  auto shape = std::make_shared<BodyMesh>();
  shape->mesh = mesh;
  shape->mesh.normals.clear();
  shape->mesh.velocities.clear();
  for (Vec3f& p : shape->mesh.points) p = to_vec3f(axes.transpose() * (to_vec3d(p) - m.com));
  // A margin of four voxels holds the contact margin and the liquids' reach.
  shape->sdf = mesh_to_sdf(shape->mesh, voxel_size, 4.0 * voxel_size, threads);
  shape->finish(2.0 * voxel_size);
  return {shape, m.com, Quatd(axes)};
}

std::size_t Bodies::add(const std::string& body_name, const BodyGeometry& g, double density, const Vec3d& position,
                        const Quatd& rotation, const Vec3d& velocity, const Vec3d& angular_velocity,
                        double body_friction) {
  const std::string where = "body '" + body_name + "'";
  const bool sized = g.shape == BodyShape::Box    ? (g.half.array() > 0).all()
                     : g.shape == BodyShape::Mesh ? g.mesh != nullptr
                                                  : g.radius > 0 && (g.shape != BodyShape::Capsule || g.half_height >= 0);
  if (!sized) throw Error(where + (g.shape == BodyShape::Mesh ? ": a mesh shape needs its mesh" : ": its size must be positive"));
  if (!(density > 0) || !std::isfinite(density)) throw Error(where + ": density must be positive");
  if (!(body_friction >= 0)) throw Error(where + ": friction must be 0 or more");
  const MassProperties m = mass_properties(g, density);
  name.push_back(body_name);
  geometry.push_back(g);
  mass.push_back(m.mass);
  inertia.push_back(m.inertia.diagonal());
  friction.push_back(body_friction);
  stiffness.push_back(0.0);
  dissipation.push_back(0.0);
  x.push_back(position);
  q.push_back(rotation.normalized());
  v.push_back(velocity);
  w.push_back(angular_velocity);
  return size() - 1;
}

void Bodies::set_contact(std::size_t i, double k, double tau) {
  const std::string where = "body '" + name.at(i) + "'";
  if (!(k >= 0) || !std::isfinite(k)) throw Error(where + ": contact stiffness must be 0 or more (N/m)");
  if (!(tau >= 0) || !std::isfinite(tau)) throw Error(where + ": dissipation time must be 0 or more (s)");
  stiffness[i] = k;
  dissipation[i] = tau;
}

ContactParameters contact_parameters(double ka, double taua, double kb, double taub, double k0, double tau0) {
  const bool a = ka > 0 || taua > 0, b = kb > 0 || taub > 0;
  if (!a && !b) return {k0, tau0};
  const ContactParameters A{ka > 0 ? ka : k0, taua > 0 ? taua : tau0}, B{kb > 0 ? kb : k0, taub > 0 ? taub : tau0};
  if (!b) return A;
  if (!a) return B;
  const double k = A.stiffness * B.stiffness / (A.stiffness + B.stiffness);
  const double ca = A.stiffness * A.tau, cb = B.stiffness * B.tau;
  return {k, ca + cb > 0 ? ca * cb / (ca + cb) / k : 0.0};
}

void Bodies::append(const Bodies& o) {
  auto cat = [](auto& a, const auto& b) { a.insert(a.end(), b.begin(), b.end()); };
  cat(name, o.name);
  cat(geometry, o.geometry);
  cat(mass, o.mass);
  cat(inertia, o.inertia);
  cat(friction, o.friction);
  cat(stiffness, o.stiffness);
  cat(dissipation, o.dissipation);
  cat(x, o.x);
  cat(q, o.q);
  cat(v, o.v);
  cat(w, o.w);
}

Mat3d Bodies::inertia_world(std::size_t i) const {
  const Mat3d r = q[i].toRotationMatrix();
  return r * inertia[i].asDiagonal() * r.transpose();
}

Vec3d Bodies::angular_momentum(std::size_t i) const { return inertia_world(i) * w[i] + x[i].cross(mass[i] * v[i]); }

double Bodies::kinetic_energy(std::size_t i) const {
  return 0.5 * mass[i] * v[i].squaredNorm() + 0.5 * w[i].dot(inertia_world(i) * w[i]);
}

namespace {

// A closed surface of revolution about the body's y axis through the rings
// (y, radius), bottom to top, with poles at y0 and y1, appended to m.
void append_revolved(Mesh& m, const std::vector<std::pair<double, double>>& rings, double y0, double y1, int segs,
                     const std::function<Vec3f(const Vec3d&)>& place) {
  const int base = int(m.points.size());
  m.points.push_back(place(Vec3d(0, y0, 0)));
  for (const auto& [y, r] : rings)
    for (int j = 0; j < segs; ++j) {
      const double ph = 2 * kPi * j / segs;
      m.points.push_back(place(Vec3d(r * std::cos(ph), y, r * std::sin(ph))));
    }
  m.points.push_back(place(Vec3d(0, y1, 0)));
  const int n = int(rings.size()), top = int(m.points.size()) - 1;
  auto at = [&](int i, int j) { return base + 1 + i * segs + (j % segs); };
  for (int j = 0; j < segs; ++j) m.triangles.push_back({base, at(0, j), at(0, j + 1)});
  for (int i = 0; i + 1 < n; ++i)
    for (int j = 0; j < segs; ++j) m.quads.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
  for (int j = 0; j < segs; ++j) m.triangles.push_back({top, at(n - 1, j + 1), at(n - 1, j)});
}

}  // namespace

Mesh bodies_to_mesh(const Bodies& b, int segments) {
  const int segs = std::max(6, segments), rings = std::max(2, segs / 4);
  Mesh m;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const BodyGeometry& g = b.geometry[i];
    const Quatd q = b.q[i];
    const Vec3d x = b.x[i];
    const std::function<Vec3f(const Vec3d&)> place = [&](const Vec3d& p) {
      return to_vec3f(x + q * p);
    };
    if (g.shape == BodyShape::Box || g.shape == BodyShape::Mesh) {
      const int base = int(m.points.size());
      const Mesh box = g.shape == BodyShape::Box ? box_mesh(vec3(0.0f), to_vec3f(g.half)) : Mesh{};
      const Mesh& shape = g.shape == BodyShape::Box ? box : g.mesh->mesh;
      for (const Vec3f& p : shape.points) m.points.push_back(place(to_vec3d(p)));
      for (const auto& k : shape.triangles) m.triangles.push_back({base + k[0], base + k[1], base + k[2]});
      for (const auto& k : shape.quads) m.quads.push_back({base + k[0], base + k[1], base + k[2], base + k[3]});
      continue;
    }
    // Sphere and capsule: two caps of `rings` rings each around the axis segment.
    const double r = g.radius, hh = g.shape == BodyShape::Capsule ? g.half_height : 0.0;
    std::vector<std::pair<double, double>> p;
    for (int k = 1; k <= rings; ++k) {
      const double th = 0.5 * kPi * k / rings;
      p.emplace_back(-hh - r * std::cos(th), r * std::sin(th));
    }
    for (int k = hh > 0 ? 0 : 1; k < rings; ++k) {
      const double th = 0.5 * kPi * k / rings;
      p.emplace_back(hh + r * std::sin(th), r * std::cos(th));
    }
    append_revolved(m, p, -hh - r, hh + r, segs, place);
  }
  return m;
}

Vec3d free_rotation_step(const Vec3d& I, const Vec3d& w0, double h, Vec3d* mid) {
  // F(w1) = I (w1 - w0) + h wm x (I wm) = 0 with wm = (w0 + w1) / 2, solved
  // by Newton's method (3 unknowns; two or three iterations reach round-off).
  const Mat3d Id = I.asDiagonal();
  Vec3d w1 = w0;
  for (int it = 0; it < 20; ++it) {
    const Vec3d wm = 0.5 * (w0 + w1);
    const Vec3d Iwm = I.cwiseProduct(wm);
    const Vec3d f = I.cwiseProduct(w1 - w0) + h * wm.cross(Iwm);
    // dF/dw1 = I + h/2 (skew(wm) I - skew(I wm))
    const Mat3d jac = Id + 0.5 * h * (skew(wm) * Id - skew(Iwm));
    const Vec3d dw = jac.lu().solve(-f);
    w1 += dw;
    if (dw.norm() <= 1e-15 * (w1.norm() + 1e-300)) break;
  }
  if (mid) *mid = 0.5 * (w0 + w1);
  return w1;
}

Quatd rotate_body(const Quatd& q, const Vec3d& theta) {
  const double a = theta.norm();
  if (a < 1e-300) return q;
  return (q * Quatd(Eigen::AngleAxisd(a, theta / a))).normalized();
}

}  // namespace eddy
