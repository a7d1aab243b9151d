// Rigid-body contact detection: bounds, sweep and prune, sampled signed
// distances (contact.h).
#include "eddy/core/rigid/contact.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace eddy {

namespace {

// Spheres and capsules: a core inflated by a radius.
bool rounded(const BodyGeometry& g) { return g.shape == BodyShape::Sphere || g.shape == BodyShape::Capsule; }

// Whether a feature with normal cone `cone` (body axes) supports its body
// against a push along n (body axes): -n within the cone, up to about 15
// degrees so that a box resting nearly flat keeps all its bottom corners.
// A corner's cone is the octant of its signs; an edge's lies across the
// edge (its zero component), so a push along the edge is not the edge's
// (the corner at its end takes it); a zero cone (a sphere's or capsule's
// core) faces every way. Without this test a corner of one box lying on the
// side plane of an equal box stacked on it would make a sideways contact.
bool supports(const Vec3d& cone, const Vec3d& n_body) {
  if (cone.isZero()) return true;
  for (int k = 0; k < 3; ++k) {
    if (cone[k] != 0 && -n_body[k] * cone[k] < -0.25) return false;
    if (cone[k] == 0 && std::abs(n_body[k]) > 0.25) return false;
  }
  return true;
}

// Signed distance of a shape at body-frame point q, with its outward normal.
// Inside a box the nearest face need not be the one a sampled feature
// pushes against: the top corner of a box under an equal box lies on that
// box's side planes (distance 0) as it presses 0.1 mm into its bottom face.
// With `feature`, the nearest face whose normal the feature's cone supports,
// within a quarter of the smallest half extent, is taken. A mesh computes its
// normal (six more reads of its grid) only at a distance below
// `normal_below`, and leaves *n as it is otherwise.
double shape_distance(const BodyGeometry& g, const Vec3d& q, Vec3d* n, const FeatureCone* feature = nullptr,
                      double normal_below = 1e300) {
  switch (g.shape) {
    case BodyShape::Box: {
      const Vec3d d = q.cwiseAbs() - g.half;
      const Vec3d s(q.x() < 0 ? -1.0 : 1.0, q.y() < 0 ? -1.0 : 1.0, q.z() < 0 ? -1.0 : 1.0);
      if ((d.array() > 0).any()) {
        const Vec3d o = d.cwiseMax(0.0);
        const double l = o.norm();
        *n = o.cwiseProduct(s) / l;
        return l;
      }
      int k = 0;  // inside: the nearest face
      const double dmax = d.maxCoeff(&k);
      if (feature) {
        int best = -1;
        for (int a = 0; a < 3; ++a) {
          if (d[a] < dmax - 0.25 * g.half.minCoeff() || (best >= 0 && d[a] <= d[best])) continue;
          Vec3d na = Vec3d::Zero();
          na[a] = s[a];
          if (supports(feature->cone, feature->to_feature * na)) best = a;
        }
        if (best >= 0) k = best;
      }
      *n = Vec3d::Zero();
      (*n)[k] = s[k];
      return d[k];
    }
    case BodyShape::Sphere: {
      const double l = q.norm();
      *n = l > 1e-300 ? Vec3d(q / l) : Vec3d::UnitY();
      return l - g.radius;
    }
    case BodyShape::Capsule: {
      const Vec3d d = q - Vec3d(0, std::clamp(q.y(), -g.half_height, g.half_height), 0);
      const double l = d.norm();
      *n = l > 1e-300 ? Vec3d(d / l) : Vec3d::UnitX();
      return l - g.radius;
    }
    case BodyShape::Mesh: {
      // The sampled distance, read as a Grid collider at rest in the body frame.
      const Collider& grid = g.mesh->grid;
      const double d = detail::grid_value(grid, to_vec3f(q));
      if (d >= normal_below) return d;
      *n = to_vec3d(detail::sdf_grid(grid, to_vec3f(q)).normal);
      return d;
    }
  }
  return 1e300;
}

// The radius a shape's core is inflated by.
double core_radius(const BodyGeometry& g) { return rounded(g) ? g.radius : 0.0; }

// A sample point on a shape's core (body frame) and the normal cone of
// the feature it stands for: a box corner faces the directions whose
// components have the signs of `cone`, an edge midpoint those of its two
// non-zero components; the core of a sphere or capsule faces every way
// (cone zero).
struct Sample {
  Vec3d p, cone;
};

void core_samples(const BodyGeometry& g, std::vector<Sample>& out) {
  out.clear();
  switch (g.shape) {
    case BodyShape::Box: {
      const Vec3d& e = g.half;
      for (int c = 0; c < 8; ++c) {
        const Vec3d s(c & 1 ? 1 : -1, c & 2 ? 1 : -1, c & 4 ? 1 : -1);
        out.push_back({s.cwiseProduct(e), s});
      }
      // Edge midpoints: one coordinate 0, the other two at +-half.
      for (int axis = 0; axis < 3; ++axis)
        for (int c = 0; c < 4; ++c) {
          Vec3d s = Vec3d::Zero();
          s[(axis + 1) % 3] = c & 1 ? 1 : -1;
          s[(axis + 2) % 3] = c & 2 ? 1 : -1;
          out.push_back({s.cwiseProduct(e), s});
        }
      break;
    }
    case BodyShape::Sphere: out.push_back({Vec3d::Zero(), Vec3d::Zero()}); break;
    case BodyShape::Capsule:
      for (int k = 0; k < 5; ++k) out.push_back({Vec3d(0.0, g.half_height * (-1.0 + 0.5 * k), 0.0), Vec3d::Zero()});
      break;
    case BodyShape::Mesh:
      // Surface points face every way: a mesh's features carry no cone.
      for (const Vec3d& p : g.mesh->samples) out.push_back({p, Vec3d::Zero()});
      break;
  }
}

// World samples of a body with their cones (the cones stay in body axes).
struct WorldSamples {
  std::vector<Vec3d> p;
  std::vector<Vec3d> cone;
};

// Closest points s, t in [0, 1] of segments p0 + s d1 and q0 + t d2.
void closest_on_segments(const Vec3d& p0, const Vec3d& d1, const Vec3d& q0, const Vec3d& d2, double& s, double& t) {
  const Vec3d r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  if (a <= 1e-300 && e <= 1e-300) {
    s = t = 0;
    return;
  }
  if (a <= 1e-300) {
    s = 0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = d1.dot(r);
  if (e <= 1e-300) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = d1.dot(d2), den = a * e - b * b;
  s = den > 1e-300 ? std::clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

// Contacts of body s's world sample points against body o's shape.
void sample_against(const Bodies& B, int s, int o, const WorldSamples& ws, double margin,
                    std::vector<BodyContact>& out) {
  const double rs = core_radius(B.geometry[std::size_t(s)]);
  for (std::size_t k = 0; k < ws.p.size(); ++k) {
    const Vec3d& ps = ws.p[k];
    // A face of o can push the sampled feature only along a normal its cone supports.
    const FeatureCone feature{ws.cone[k], B.q[std::size_t(s)].conjugate() * B.q[std::size_t(o)]};
    Vec3d n;
    const double d =
        body_distance(B, std::size_t(o), ps, &n, feature.cone.isZero() ? nullptr : &feature, margin + rs);
    const double phi = d - rs;
    if (phi >= margin || !supports(ws.cone[k], B.q[std::size_t(s)].conjugate() * n)) continue;
    BodyContact c;
    c.a = s;
    c.b = o;
    c.p = ps - n * (0.5 * (rs + d));
    c.n = n;
    c.phi = phi;
    out.push_back(c);
  }
}

// Box s's samples against box o: its corners, and on each edge the point
// deepest in o. A box's signed distance is convex along a line, so a
// golden-section search finds it; edges that cross o's edges anywhere along
// their length are caught there rather than only when a corner or an edge's
// middle goes in.
WorldSamples box_samples_against(const Bodies& B, int s, int o, double margin) {
  const BodyGeometry& g = B.geometry[std::size_t(s)];
  const Quatd& q = B.q[std::size_t(s)];
  const Vec3d& x = B.x[std::size_t(s)];
  WorldSamples ws;
  for (int c = 0; c < 8; ++c) {
    const Vec3d sg(c & 1 ? 1 : -1, c & 2 ? 1 : -1, c & 4 ? 1 : -1);
    ws.p.push_back(x + q * sg.cwiseProduct(g.half));
    ws.cone.push_back(sg);
  }
  constexpr double kGolden = 0.6180339887498949;
  const BodyGeometry& go = B.geometry[std::size_t(o)];
  const Mat3d to_o = B.q[std::size_t(o)].conjugate().toRotationMatrix();
  const Vec3d& xo = B.x[std::size_t(o)];
  Vec3d n;
  for (int axis = 0; axis < 3; ++axis)
    for (int c = 0; c < 4; ++c) {
      Vec3d sg = Vec3d::Zero();
      sg[(axis + 1) % 3] = c & 1 ? 1 : -1;
      sg[(axis + 2) % 3] = c & 2 ? 1 : -1;
      Vec3d e = Vec3d::Zero();
      e[axis] = g.half[axis];
      const Vec3d a = x + q * (sg.cwiseProduct(g.half) - e), b = x + q * (sg.cwiseProduct(g.half) + e);
      // Searched in o's frame, where its distance needs no rotation.
      const Vec3d la = to_o * (a - xo), lb = to_o * (b - xo);
      auto f = [&](double t) { return shape_distance(go, la + t * (lb - la), &n, nullptr, -1e300); };
      // The distance changes no faster than the point moves: an edge whose
      // ends stand further off than half its length plus the margin cannot
      // come within the margin anywhere.
      if (std::min(f(0), f(1)) - g.half[axis] >= margin) continue;
      double lo = 0, hi = 1, t1 = hi - kGolden * (hi - lo), t2 = lo + kGolden * (hi - lo);
      double f1 = f(t1), f2 = f(t2);
      for (int it = 0; it < 16; ++it) {  // the bracket shrinks to 5e-4 of the edge
        if (f1 <= f2) {
          hi = t2, t2 = t1, f2 = f1;
          t1 = hi - kGolden * (hi - lo), f1 = f(t1);
        } else {
          lo = t1, t1 = t2, f1 = f2;
          t2 = lo + kGolden * (hi - lo), f2 = f(t2);
        }
      }
      // At an end, the deepest point is a corner, sampled already.
      const double t = 0.5 * (lo + hi);
      if (t < 1e-3 || t > 1 - 1e-3) continue;
      ws.p.push_back(a + t * (b - a));
      ws.cone.push_back(sg);
    }
  return ws;
}

}  // namespace

BoundsD body_bounds(const Bodies& B, std::size_t i, double margin) {
  const BodyGeometry& g = B.geometry[i];
  const Mat3d R = B.q[i].toRotationMatrix();
  Vec3d ext = Vec3d::Zero(), centre = B.x[i];
  switch (g.shape) {
    case BodyShape::Box: ext = R.cwiseAbs() * g.half; break;
    case BodyShape::Sphere: ext = Vec3d::Constant(g.radius); break;
    case BodyShape::Capsule: ext = R.col(1).cwiseAbs() * g.half_height + Vec3d::Constant(g.radius); break;
    case BodyShape::Mesh:
      // The mesh's box in the body frame, turned: its centre need not be the centre of mass.
      ext = R.cwiseAbs() * (0.5 * (g.mesh->hi - g.mesh->lo));
      centre += R * (0.5 * (g.mesh->hi + g.mesh->lo));
      break;
  }
  ext.array() += margin;
  return {centre - ext, centre + ext};
}

double body_reach(const Bodies& B, std::size_t i) {
  const BodyGeometry& g = B.geometry[i];
  switch (g.shape) {
    case BodyShape::Box: return g.half.norm();
    case BodyShape::Sphere: return g.radius;
    case BodyShape::Capsule: return g.half_height + g.radius;
    case BodyShape::Mesh: return g.mesh->reach;
  }
  return 0;
}

double body_surface_speed(const Bodies& B, std::size_t i) { return B.v[i].norm() + B.w[i].norm() * body_reach(B, i); }

std::vector<std::pair<int, int>> overlapping_pairs(const std::vector<BoundsD>& bounds) {
  std::vector<std::pair<int, int>> pairs;
  const int n = int(bounds.size());
  if (n < 2) return pairs;
  // Sweep along the axis where the boxes' centres spread most.
  Vec3d mean = Vec3d::Zero(), sq = Vec3d::Zero();
  for (const auto& b : bounds) {
    const Vec3d c = 0.5 * (b.lo + b.hi);
    mean += c;
    sq += c.cwiseProduct(c);
  }
  int axis = 0;
  (sq / n - (mean / n).cwiseProduct(mean / n)).maxCoeff(&axis);
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int p, int q) {
    const double a = bounds[std::size_t(p)].lo[axis], b = bounds[std::size_t(q)].lo[axis];
    return a < b || (a == b && p < q);
  });
  for (int k = 0; k < n; ++k) {
    const BoundsD& a = bounds[std::size_t(order[std::size_t(k)])];
    for (int m = k + 1; m < n; ++m) {
      const BoundsD& b = bounds[std::size_t(order[std::size_t(m)])];
      if (b.lo[axis] > a.hi[axis]) break;
      if ((a.lo.array() <= b.hi.array()).all() && (b.lo.array() <= a.hi.array()).all())
        pairs.emplace_back(std::min(order[std::size_t(k)], order[std::size_t(m)]),
                           std::max(order[std::size_t(k)], order[std::size_t(m)]));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

double body_distance(const Bodies& B, std::size_t i, const Vec3d& p, Vec3d* normal, const FeatureCone* feature,
                     double normal_below) {
  const Quatd& q = B.q[i];
  Vec3d n = Vec3d::UnitY();
  const double d = shape_distance(B.geometry[i], q.conjugate() * (p - B.x[i]), &n, feature, normal_below);
  *normal = q * n;
  return d;
}

// Runs f(k, out) for k in [0, n) in parallel, each into its own list, and
// appends the lists to `out` in the order of k: the contacts come out as a
// serial loop would give them, whatever the thread count.
template <class F>
void gather_in_order(std::size_t n, std::vector<BodyContact>& out, F f) {
  std::vector<std::vector<BodyContact>> part(n);
  if (n <= 8) {  // a task costs more than a few pairs
    for (std::size_t k = 0; k < n; ++k) f(k, part[k]);
  } else {
    tbb::parallel_for(std::size_t(0), n, [&](std::size_t k) { f(k, part[k]); });
  }
  std::size_t total = out.size();
  for (const auto& q : part) total += q.size();
  out.reserve(total);
  for (const auto& q : part) out.insert(out.end(), q.begin(), q.end());
}

void find_contacts(const Bodies& B, const std::vector<Collider>& colliders, double time, double margin,
                   std::vector<BodyContact>& out) {
  out.clear();
  const std::size_t n = B.size();
  // World samples of every body, once.
  std::vector<WorldSamples> samples(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16), [&](const auto& r) {
    std::vector<Sample> local;
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      core_samples(B.geometry[i], local);
      for (const Sample& s : local) {
        samples[i].p.push_back(B.x[i] + B.q[i] * s.p);
        samples[i].cone.push_back(s.cone);
      }
    }
  });
  // Body pairs.
  std::vector<BoundsD> bounds(n);
  for (std::size_t i = 0; i < n; ++i) bounds[i] = body_bounds(B, i, 0.5 * margin);
  const auto pairs = overlapping_pairs(bounds);
  gather_in_order(pairs.size(), out, [&](std::size_t k, std::vector<BodyContact>& found) {
    const auto [i, j] = pairs[k];
    const BodyGeometry &gi = B.geometry[std::size_t(i)], &gj = B.geometry[std::size_t(j)];
    if (rounded(gi)) sample_against(B, i, j, samples[std::size_t(i)], margin, found);
    else if (rounded(gj)) sample_against(B, j, i, samples[std::size_t(j)], margin, found);
    if (!rounded(gi) && !rounded(gj)) {
      // Boxes and meshes sample each other both ways: a box with its corners
      // and its edges' deepest points, a mesh with its surface samples.
      auto both = [&](int s, int o) {
        if (B.geometry[std::size_t(s)].shape == BodyShape::Box)
          sample_against(B, s, o, box_samples_against(B, s, o, margin), margin, found);
        else sample_against(B, s, o, samples[std::size_t(s)], margin, found);
      };
      both(i, j);
      both(j, i);
    }
    if (gi.shape == BodyShape::Capsule && gj.shape == BodyShape::Capsule) {
      // The axes' closest points, which the sampled points may straddle.
      auto axis = [&](int m, Vec3d& p0, Vec3d& d) {
        const Vec3d e = B.q[std::size_t(m)] * Vec3d(0, B.geometry[std::size_t(m)].half_height, 0);
        p0 = B.x[std::size_t(m)] - e;
        d = 2.0 * e;
      };
      Vec3d p0, d1, q0, d2;
      axis(i, p0, d1);
      axis(j, q0, d2);
      double s = 0, t = 0;
      closest_on_segments(p0, d1, q0, d2, s, t);
      sample_against(B, i, j, WorldSamples{{p0 + s * d1}, {Vec3d::Zero()}}, margin, found);
    }
  });
  // Bodies against colliders.
  gather_in_order(n, out, [&](std::size_t i, std::vector<BodyContact>& found) {
    const double rs = core_radius(B.geometry[i]);
    const double reach = body_reach(B, i) + margin;
    for (std::size_t c = 0; c < colliders.size(); ++c) {
      const Collider& col = colliders[c];
      const Vec3f xc = to_vec3f(B.x[i]);
      if (collider_sdf(col, xc, float(time)).distance > reach && !col.inside) continue;
      for (std::size_t s = 0; s < samples[i].p.size(); ++s) {
        const Vec3d& ps = samples[i].p[s];
        SdfSample walls[3];
        const int k = collider_walls(col, to_vec3f(ps), float(time), walls);
        for (int m = 0; m < k; ++m) {
          const double d = walls[m].distance;
          const double phi = d - rs;
          const Vec3d nw = to_vec3d(walls[m].normal).normalized();
          if (phi >= margin || !supports(samples[i].cone[s], B.q[i].conjugate() * nw)) continue;
          BodyContact ct;
          ct.a = int(i);
          ct.collider = int(c);
          ct.n = nw;
          ct.p = ps - ct.n * (0.5 * (rs + d));
          ct.phi = phi;
          const Vec3f u = collider_velocity(col, to_vec3f(ct.p), float(time));
          ct.u = to_vec3d(u);
          found.push_back(ct);
        }
      }
    }
  });
}

}  // namespace eddy
