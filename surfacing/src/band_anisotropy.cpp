// Anisotropic kernels (Yu & Turk 2013) as ellipsoids for the rasteriser. See band.h.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "band.h"
#include "eddy/core/mat3.h"

namespace eddy::band {

Ellipsoids anisotropy(const Vec3f* P, std::size_t n, const AnisotropyParams& ap) {
  Ellipsoids out;
  out.centre.resize(n);
  out.shape.resize(n);
  if (n == 0) return out;
  const CellList cells(P, n, ap.radius);
  const double inv_h = 1.0 / ap.radius, h2 = ap.radius * ap.radius;
  const double sphere = ap.core + ap.grow;
  const double k_r = std::max(1.0, ap.max_ratio);
  std::vector<uint8_t> stretched(n, 0);
  std::vector<Vec3f> offset_to_mean(n);
  // Yu & Turk's weights, 1 - (d / radius)^3, over every point within radius
  // of x (x's own point included): f(j, w) for each.
  auto for_neighbours = [&](Vec3f x, const CellList::Range (&near)[27], auto&& f) {
    for (const CellList::Range& r : near)
      for (uint32_t e = r.begin; e != r.end; ++e) {
        const uint32_t j = cells.point(e);
        const double d2 = double(length2(P[j] - x));
        if (d2 >= h2) continue;
        const double q = std::sqrt(d2) * inv_h;
        f(j, 1.0 - q * q * q);
      }
  };
  // body(i, x_i, the 27 cell ranges around x_i) for every point, in parallel,
  // in cell order: the ranges are looked up once per cell.
  auto each_point = [&](auto&& body) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1024), [&](const auto& range) {
      CellList::Range near[27];
      uint64_t cell = ~uint64_t(0);
      for (std::size_t entry = range.begin(); entry != range.end(); ++entry) {
        const std::size_t i = cells.point(uint32_t(entry));
        const uint64_t k = cells.key(P[i]);
        if (k != cell) cells.ranges(cell = k, near);
        body(i, P[i], near);
      }
    });
  };
  each_point([&](std::size_t i, Vec3f x, const CellList::Range (&near)[27]) {
    // Offsets from x_i, in double: the covariance is a difference of
    // second moments that cancel to a few per cent on a flat layer.
    double wsum = 0, m[3] = {0, 0, 0}, mm[6] = {0, 0, 0, 0, 0, 0};  // xx xy xz yy yz zz
    int others = 0;
    for_neighbours(x, near, [&](uint32_t j, double w) {
      const Vec3f d = P[j] - x;
      others += j != i;
      wsum += w;
      m[0] += w * d.x, m[1] += w * d.y, m[2] += w * d.z;
      mm[0] += w * d.x * d.x, mm[1] += w * d.x * d.y, mm[2] += w * d.x * d.z;
      mm[3] += w * d.y * d.y, mm[4] += w * d.y * d.z, mm[5] += w * d.z * d.z;
    });
    for (double& v : m) v /= wsum;  // wsum >= 1: x_i itself
    offset_to_mean[i] = vec3(float(m[0]), float(m[1]), float(m[2]));
    if (others < ap.min_neighbours) {
      out.shape[i] = {mat3_identity(), 1.0f, 1.0f};
      return;
    }
    const double c[6] = {mm[0] / wsum - m[0] * m[0], mm[1] / wsum - m[0] * m[1], mm[2] / wsum - m[0] * m[2],
                         mm[3] / wsum - m[1] * m[1], mm[4] / wsum - m[1] * m[2], mm[5] / wsum - m[2] * m[2]};
    const Mat3f C = {{float(c[0]), float(c[1]), float(c[2])},
                     {float(c[1]), float(c[3]), float(c[4])},
                     {float(c[2]), float(c[4]), float(c[5])}};
    const Svd3 svd = svd3(C);  // C symmetric positive semi-definite: V's columns are its eigenvectors
    const double s1 = double(svd.s.x);
    if (!(s1 > 0)) {
      out.shape[i] = {mat3_identity(), 1.0f, 1.0f};
      return;
    }
    double s[3] = {s1, std::max(double(std::fabs(svd.s.y)), s1 / k_r), std::max(double(std::fabs(svd.s.z)), s1 / k_r)};
    const double norm = std::cbrt(s[0] * s[1] * s[2]);
    double t[3] = {s[0] / norm, s[1] / norm, s[2] / norm};
    // One-sided neighbourhoods (the surface of a body of liquid, whose
    // neighbours' mean lies inward, 0.2 radius off on a lattice) keep their
    // radius across the surface, the other axes shrinking to keep the
    // volume, so the surface stays a radius out from the outer centres and
    // the body keeps its volume; two-sided ones (a sheet one particle
    // thick, mean offset 0) are flattened. Blended between offsets of 0.05
    // and 0.15 radius.
    const Vec3f minor = vec3(at(svd.V, 0, 2), at(svd.V, 1, 2), at(svd.V, 2, 2));
    const double offset = std::fabs(m[0] * minor.x + m[1] * minor.y + m[2] * minor.z) * inv_h;
    const double one_sided = std::clamp((offset - 0.05) / 0.10, 0.0, 1.0);
    if (one_sided > 0 && t[2] < 1.0) {
      const double raised = t[2] + one_sided * (1.0 - t[2]), keep = std::sqrt(t[2] / raised);
      t[0] *= keep, t[1] *= keep, t[2] = raised;
    }
    // No axis thinner than min_axis: a sheet the grid cannot carry tears.
    const double floor_t = ap.min_axis / ap.core;
    for (double& ta : t) ta = std::max(ta, floor_t);
    float g[3];
    for (int a = 0; a < 3; ++a) g[a] = float(sphere / (t[a] * ap.core + ap.grow));
    Mat3f G = mat3_zero();
    for (int a = 0; a < 3; ++a) {
      const Vec3f v = vec3(at(svd.V, 0, a), at(svd.V, 1, a), at(svd.V, 2, a));
      G += outer(v, v) * g[a];
    }
    out.shape[i] = {G, 1.0f / std::max({g[0], g[1], g[2]}), 1.0f / std::min({g[0], g[1], g[2]})};
    stretched[i] = 1;
  });
  for (uint8_t s : stretched) out.anisotropic += s;
  // Smoothed centres: Yu & Turk move x_i by lambda (m_i - x_i), which on a
  // body's surface (m_i a fifth of the radius inward) pulls the whole
  // surface in. Here the move is lambda times the offset less its own
  // neighbourhood's weighted mean: an offset shared by the neighbours (a
  // flat or evenly curved surface) moves nothing, a particle off the local
  // surface is moved onto it.
  if (!(ap.lambda > 0)) {
    std::copy(P, P + n, out.centre.begin());
    return out;
  }
  each_point([&](std::size_t i, Vec3f x, const CellList::Range (&near)[27]) {
    double wsum = 0, a[3] = {0, 0, 0};
    for_neighbours(x, near, [&](uint32_t j, double w) {
      wsum += w;
      a[0] += w * offset_to_mean[j].x, a[1] += w * offset_to_mean[j].y, a[2] += w * offset_to_mean[j].z;
    });
    const Vec3f shared = vec3(float(a[0] / wsum), float(a[1] / wsum), float(a[2] / wsum));
    out.centre[i] = x + (offset_to_mean[i] - shared) * float(ap.lambda);
  });
  return out;
}

}  // namespace eddy::band
