#pragma once
// Small scenes shared by the tests: a block of particles on a lattice of
// spacing 2r (with an `id`), the same block all moving at one velocity, a
// container box, and a UV sphere mesh.
#include <cmath>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"
#include "eddy/core/points.h"

namespace eddy::test {

inline Points block(int nx, int ny, int nz, float r, Vec3f origin = vec3(0)) {
  Points p(std::size_t(nx) * ny * nz);
  p.radius = r;
  p.add("id", AttribType::Int);
  std::size_t i = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x, ++i) {
        p.P()[i] = origin + vec3(r + x * 2 * r, r + y * 2 * r, r + z * 2 * r);
        p.get_int("id")[i] = int32_t(i);
      }
  return p;
}

// A block every particle of which moves at `v` (thrown into a corner of a
// tank, a splash that exercises every stage of a step).
inline Points moving_block(int nx, int ny, int nz, float r, Vec3f origin, Vec3f v) {
  Points p = block(nx, ny, nz, r, origin);
  for (std::size_t i = 0; i < p.size(); ++i) p.v()[i] = v;
  return p;
}

inline Collider tank(Vec3f lo, Vec3f hi) {
  Collider c;
  c.type = ShapeType::Box;
  c.inside = 1;
  c.center = (lo + hi) * 0.5f;
  c.size = (hi - lo) * 0.5f;
  return c;
}

// A UV sphere about the origin, wound outward: poles on the y axis, `rings`
// bands of latitude (quads between triangle fans at the poles), `segs`
// points around each.
inline Mesh uv_sphere(float radius, int rings, int segs) {
  Mesh m;
  m.points.push_back(vec3(0, -radius, 0));
  for (int i = 1; i < rings; ++i) {
    const float th = float(M_PI) * i / rings;
    for (int j = 0; j < segs; ++j) {
      const float ph = 2 * float(M_PI) * j / segs;
      m.points.push_back(vec3(radius * std::sin(th) * std::cos(ph), -radius * std::cos(th), radius * std::sin(th) * std::sin(ph)));
    }
  }
  m.points.push_back(vec3(0, radius, 0));
  auto at = [&](int i, int j) { return 1 + (i - 1) * segs + (j % segs); };
  const int top = int(m.points.size()) - 1;
  for (int j = 0; j < segs; ++j) m.triangles.push_back({0, at(1, j), at(1, j + 1)});
  for (int i = 1; i < rings - 1; ++i)
    for (int j = 0; j < segs; ++j) m.quads.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
  for (int j = 0; j < segs; ++j) m.triangles.push_back({top, at(rings - 1, j + 1), at(rings - 1, j)});
  return m;
}

}  // namespace eddy::test
