// A deforming mesh's surface velocity on a Grid collider's nodes (mesh_velocity.h).
#include "eddy/core/mesh_velocity.h"

#include <cmath>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/mesh_sdf.h"

namespace eddy {

std::vector<Vec3f> sequence_velocities(const Mesh& now, const Mesh& before, double fps) {
  if (now.points.size() != before.points.size() || now.triangles != before.triangles || now.quads != before.quads)
    return {};
  std::vector<Vec3f> v(now.points.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = (now.points[i] - before.points[i]) * float(fps);
  return v;
}

std::vector<Vec3f> surface_velocity_on_grid(const Mesh& mesh, const std::vector<Vec3f>& point_velocity,
                                            const Collider& grid, float band, int threads) {
  const int nx = grid.grid_dims[0], ny = grid.grid_dims[1], nz = grid.grid_dims[2];
  const std::size_t nodes = std::size_t(nx) * ny * nz;
  std::vector<Vec3f> out(nodes, vec3(0.0f));
  if (nodes == 0 || point_velocity.size() != mesh.points.size() || !(band > 0)) return out;
  const MeshDistance dist(mesh);
  const auto& tris = dist.triangles();
  CpuExecutor(threads).for_each(uint32_t(nodes), [&](uint32_t n) {
    if (!(std::fabs(grid.grid[n]) <= band)) return;
    const int i = int(n % uint32_t(nx)), j = int(n / uint32_t(nx) % uint32_t(ny)), k = int(n / (uint32_t(nx) * ny));
    const MeshDistance::Closest c = dist.closest(grid.grid_origin + vec3(float(i), float(j), float(k)) * grid.grid_dx);
    const auto& f = tris[c.triangle];
    out[n] = point_velocity[f[0]] * c.weights.x + point_velocity[f[1]] * c.weights.y +
             point_velocity[f[2]] * c.weights.z;
  });
  return out;
}

}  // namespace eddy
