#pragma once
// The exact signed distance of a closed triangle mesh, for colliders,
// sources and fills sampled from meshes (ColliderMesh, FluidSource with a
// mesh, ParticlesFromMesh, ColliderSoft).
//
// MeshDistance holds the mesh's triangles (quads split along their 0-2
// diagonal) in a bounding-volume hierarchy: a query descends the nearer
// child first and skips any box farther than the closest triangle found,
// so it costs about the logarithm of the triangle count. The sign comes
// from the angle-weighted pseudonormal of the closest feature (face, edge
// or vertex; Baerentzen & Aanaes 2005), exact for a closed, consistently
// wound mesh: positive outside, negative inside.
#include <array>
#include <cstdint>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/mesh.h"

namespace eddy {

// The closest point to p on triangle (a, b, c), as barycentric weights
// (wa, wb, wc), each >= 0 and summing to 1; a weight is exactly 0 when the
// point lies on the opposite edge or at a corner.
Vec3f closest_on_triangle(Vec3f p, Vec3f a, Vec3f b, Vec3f c);

class MeshDistance {
 public:
  // Throws eddy::Error for a mesh without faces.
  explicit MeshDistance(const Mesh& mesh);

  struct Closest {
    float distance = 0;   // signed: negative inside
    uint32_t triangle = 0;  // into triangles()
    Vec3f weights{1, 0, 0};  // of its corners
  };
  Closest closest(Vec3f p) const;
  // The same among the triangles within `reach` (m) of p: false when none is.
  bool closest_within(Vec3f p, float reach, Closest& out) const;
  // The unsigned distance from p to triangle t.
  float distance_to(Vec3f p, uint32_t t) const;
  const std::vector<std::array<int32_t, 3>>& triangles() const { return tris_; }

 private:
  struct Node {
    Vec3f lo, hi;
    uint32_t first = 0, count = 0;  // a leaf's triangles in order_; an inner node's children at first, first + 1
  };
  void build(uint32_t self, uint32_t begin, uint32_t end, const std::vector<Vec3f>& centres);
  std::vector<Vec3f> points_;
  std::vector<std::array<int32_t, 3>> tris_;
  std::vector<uint32_t> order_;  // triangle indices, leaf by leaf
  std::vector<Node> nodes_;
  // Pseudonormals: per triangle its face normal and its three edges' (edge k
  // from corner k to corner k + 1), per point its angle-weighted normal.
  std::vector<Vec3f> face_n_, vertex_n_;
  std::vector<std::array<Vec3f, 3>> edge_n_;
};

// A signed distance sampled on a dense grid: node (i, j, k) at origin +
// (i, j, k) dx, x fastest.
struct SampledSdf {
  int dims[3] = {0, 0, 0};
  float origin[3] = {0, 0, 0};
  float dx = 0;
  std::vector<float> values;  // negative inside the mesh
};
// The grid mesh_to_sdf fills: spacing dx over the mesh's bounds plus
// `margin`, its values allocated (zero). Throws for a voxel size that is not
// positive or a grid that would not fit in memory.
SampledSdf sdf_grid_over(const Mesh& mesh, double dx, double margin);
// The signed distance of a closed mesh on a dense grid of spacing dx over
// its bounds plus `margin`: exact within three voxels of the surface, and
// beyond by closest-point propagation (each node the nearest of its
// neighbours' closest triangles, so at most the distance to a triangle, and
// the exact distance wherever a neighbour's closest triangle is its own).
// Throws as sdf_grid_over. `threads` as CpuExecutor's.
SampledSdf mesh_to_sdf(const Mesh& mesh, double dx, double margin, int threads = 0);
// A Grid collider at rest at the origin over sdf's nodes (it points into
// sdf.values, which must outlive it).
Collider grid_collider(const SampledSdf& sdf);

}  // namespace eddy
