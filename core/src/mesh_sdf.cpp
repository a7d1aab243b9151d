// The exact signed distance of a closed triangle mesh (mesh_sdf.h).
#include "eddy/core/mesh_sdf.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/error.h"
#include "eddy/core/io.h"

namespace eddy {

Vec3f closest_on_triangle(Vec3f p, Vec3f a, Vec3f b, Vec3f c) {
  // The Voronoi regions of the corners, then of the edges, then the face,
  // each decided by dot products with the edges from a (Ericson 2005, 5.1.5).
  const Vec3f ab = b - a, ac = c - a, ap = p - a;
  const float d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return vec3(1, 0, 0);
  const Vec3f bp = p - b;
  const float d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return vec3(0, 1, 0);
  const float vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const float v = d1 / (d1 - d3);  // d1 - d3 = |ab|^2 > 0 here
    return vec3(1 - v, v, 0);
  }
  const Vec3f cp = p - c;
  const float d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return vec3(0, 0, 1);
  const float vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const float w = d2 / (d2 - d6);  // |ac|^2
    return vec3(1 - w, 0, w);
  }
  const float va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    const float w = (d4 - d3) / ((d4 - d3) + (d5 - d6));  // |bc|^2
    return vec3(0, 1 - w, w);
  }
  const float sum = va + vb + vc;  // twice the area, squared: 0 only for a degenerate triangle
  if (!(sum > 0)) return vec3(1, 0, 0);
  const float v = vb / sum, w = vc / sum;
  return vec3(1 - v - w, v, w);
}

namespace {

// Squared distance from p to the box [lo, hi] (0 inside). Plain
// comparisons, which compile to max instructions (fmaxf's NaN rules do not).
float box_distance2(Vec3f p, Vec3f lo, Vec3f hi) {
  auto gap = [](float a, float l, float h) {
    const float g = l - a > a - h ? l - a : a - h;
    return g > 0.0f ? g : 0.0f;
  };
  const float x = gap(p.x, lo.x, hi.x), y = gap(p.y, lo.y, hi.y), z = gap(p.z, lo.z, hi.z);
  return x * x + y * y + z * z;
}

// The angle of triangle (a, b, c) at a.
float corner_angle(Vec3f a, Vec3f b, Vec3f c) {
  const Vec3f u = b - a, v = c - a;
  return std::atan2(length(cross(u, v)), dot(u, v));
}

constexpr uint32_t kLeafSize = 4;

}  // namespace

MeshDistance::MeshDistance(const Mesh& mesh) : points_(mesh.points), tris_(mesh.triangles) {
  for (const auto& q : mesh.quads) {
    tris_.push_back({q[0], q[1], q[2]});
    tris_.push_back({q[0], q[2], q[3]});
  }
  if (tris_.empty()) throw Error("the mesh has no faces");
  for (const auto& t : tris_)
    for (const int32_t v : t)
      if (v < 0 || std::size_t(v) >= points_.size())
        throw Error("the mesh has a face with point index " + std::to_string(v) + " of " +
                    std::to_string(points_.size()) + " points");
  // Pseudonormals: faces' unit normals; a point's, weighted by each face's
  // angle there; an edge's, the sum of its two faces' (only its direction matters).
  const std::size_t nt = tris_.size();
  face_n_.resize(nt);
  vertex_n_.assign(points_.size(), vec3(0.0f));
  std::map<std::pair<int32_t, int32_t>, Vec3f> edges;
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& f = tris_[t];
    const Vec3f a = points_[f[0]], b = points_[f[1]], c = points_[f[2]];
    const Vec3f n = normalize_or(cross(b - a, c - a), vec3(0.0f));
    face_n_[t] = n;
    vertex_n_[f[0]] += n * corner_angle(a, b, c);
    vertex_n_[f[1]] += n * corner_angle(b, c, a);
    vertex_n_[f[2]] += n * corner_angle(c, a, b);
    for (int k = 0; k < 3; ++k) edges[std::minmax(f[k], f[(k + 1) % 3])] += n;
  }
  edge_n_.resize(nt);
  for (std::size_t t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) edge_n_[t][k] = edges[std::minmax(tris_[t][k], tris_[t][(k + 1) % 3])];
  // The hierarchy, split at the median of the longest axis of the centres.
  std::vector<Vec3f> centres(nt);
  order_.resize(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    order_[t] = uint32_t(t);
    centres[t] = (points_[tris_[t][0]] + points_[tris_[t][1]] + points_[tris_[t][2]]) / 3.0f;
  }
  nodes_.reserve(2 * (nt / kLeafSize + 1));
  nodes_.emplace_back();
  build(0, 0, uint32_t(nt), centres);
}

// Fills node `self` over order_[begin, end): its bounds, and either its
// triangles (a leaf) or two children split at the median centre along the
// centres' longest axis.
void MeshDistance::build(uint32_t self, uint32_t begin, uint32_t end, const std::vector<Vec3f>& centres) {
  Vec3f lo = vec3(1e30f), hi = vec3(-1e30f), clo = vec3(1e30f), chi = vec3(-1e30f);
  for (uint32_t i = begin; i < end; ++i) {
    for (const int32_t v : tris_[order_[i]]) {
      lo = vmin(lo, points_[v]);
      hi = vmax(hi, points_[v]);
    }
    clo = vmin(clo, centres[order_[i]]);
    chi = vmax(chi, centres[order_[i]]);
  }
  nodes_[self].lo = lo;
  nodes_[self].hi = hi;
  if (end - begin <= kLeafSize) {
    nodes_[self].first = begin;
    nodes_[self].count = end - begin;
    return;
  }
  const Vec3f ext = chi - clo;
  const int axis = ext.x >= ext.y && ext.x >= ext.z ? 0 : ext.y >= ext.z ? 1 : 2;
  const uint32_t mid = begin + (end - begin) / 2;
  std::nth_element(order_.begin() + begin, order_.begin() + mid, order_.begin() + end,
                   [&](uint32_t a, uint32_t b) { return (&centres[a].x)[axis] < (&centres[b].x)[axis]; });
  const uint32_t child = uint32_t(nodes_.size());
  nodes_[self].first = child;
  nodes_[self].count = 0;
  nodes_.emplace_back();
  nodes_.emplace_back();
  build(child, begin, mid, centres);
  build(child + 1, mid, end, centres);
}

bool MeshDistance::closest_within(Vec3f p, float reach, Closest& best) const {
  float best2 = reach < 1e19f ? reach * reach : 1e38f;
  bool found = false;
  struct Visit {
    uint32_t node;
    float d2;  // the node's box from p, squared
  };
  Visit stack[64];
  int top = 0;
  stack[top++] = {0, box_distance2(p, nodes_[0].lo, nodes_[0].hi)};
  while (top > 0) {
    const Visit v = stack[--top];
    if (v.d2 >= best2) continue;
    const Node& n = nodes_[v.node];
    if (n.count > 0) {
      for (uint32_t i = n.first; i < n.first + n.count; ++i) {
        const auto& f = tris_[order_[i]];
        const Vec3f a = points_[f[0]], b = points_[f[1]], c = points_[f[2]];
        const Vec3f w = closest_on_triangle(p, a, b, c);
        const float d2 = length2(a * w.x + b * w.y + c * w.z - p);
        if (d2 < best2) {
          best2 = d2;
          best.triangle = order_[i];
          best.weights = w;
          found = true;
        }
      }
      continue;
    }
    // The nearer child is searched first (pushed last); a child beyond the best is not pushed.
    const Visit l{n.first, box_distance2(p, nodes_[n.first].lo, nodes_[n.first].hi)},
        r{n.first + 1, box_distance2(p, nodes_[n.first + 1].lo, nodes_[n.first + 1].hi)};
    const Visit& near = l.d2 <= r.d2 ? l : r;
    const Visit& far = l.d2 <= r.d2 ? r : l;
    if (far.d2 < best2) stack[top++] = far;
    if (near.d2 < best2) stack[top++] = near;
  }
  if (!found) return false;
  // The sign from the closest feature's pseudonormal: a corner (two zero
  // weights), an edge (one), or the face.
  const auto& f = tris_[best.triangle];
  const Vec3f w = best.weights;
  const Vec3f q = points_[f[0]] * w.x + points_[f[1]] * w.y + points_[f[2]] * w.z;
  Vec3f n = face_n_[best.triangle];
  const int zeros = (w.x == 0) + (w.y == 0) + (w.z == 0);
  if (zeros == 2) n = vertex_n_[f[w.x != 0 ? 0 : w.y != 0 ? 1 : 2]];
  else if (zeros == 1) n = edge_n_[best.triangle][w.z == 0 ? 0 : w.x == 0 ? 1 : 2];  // edge k: corners k, k + 1
  const float d = std::sqrt(best2);
  best.distance = dot(p - q, n) < 0 ? -d : d;
  return true;
}

MeshDistance::Closest MeshDistance::closest(Vec3f p) const {
  Closest c;
  closest_within(p, 1e30f, c);
  return c;
}

float MeshDistance::distance_to(Vec3f p, uint32_t t) const {
  const Vec3f a = points_[tris_[t][0]], b = points_[tris_[t][1]], c = points_[tris_[t][2]];
  const Vec3f w = closest_on_triangle(p, a, b, c);
  return length(a * w.x + b * w.y + c * w.z - p);
}

SampledSdf sdf_grid_over(const Mesh& mesh, double dx, double margin) {
  if (!(dx > 0)) throw Error("voxel size must be positive, got " + std::to_string(dx));
  if (mesh.points.empty()) throw Error("the mesh has no points");
  const Bounds3 b = mesh_bounds(mesh);
  const Vec3f lo = b.lo - vec3(float(margin)), hi = b.hi + vec3(float(margin));
  SampledSdf out;
  out.dx = float(dx);
  const float lo_a[3] = {lo.x, lo.y, lo.z}, hi_a[3] = {hi.x, hi.y, hi.z};
  double nodes = 1;
  for (int a = 0; a < 3; ++a) {
    out.origin[a] = lo_a[a];
    out.dims[a] = int(std::ceil((hi_a[a] - lo_a[a]) / dx)) + 1;
    nodes *= out.dims[a];
  }
  if (nodes * 4.0 > 0.25 * physical_memory_bytes() || nodes > 2e9)
    throw Error("a sampled SDF at voxel size " + std::to_string(dx) + " m would need " + format_bytes(nodes * 4.0) +
                "; use a larger voxel size");
  out.values.resize(std::size_t(nodes));
  return out;
}

SampledSdf mesh_to_sdf(const Mesh& mesh, double dx, double margin, int threads) {
  SampledSdf out = sdf_grid_over(mesh, dx, margin);
  const MeshDistance dist(mesh);
  // Exact within three voxels of the surface (every node beside a crossing
  // of the surface, whose neighbours lie within sqrt(3) voxels); farther
  // out by closest-point propagation (below), as a query from deep inside a
  // round shape would find every triangle about equally near and prune
  // nothing.
  const std::size_t n = out.values.size();
  std::vector<int32_t> tri(n, -1);
  const int nx = out.dims[0], ny = out.dims[1], nz = out.dims[2];
  auto at = [&](int i, int j, int k) {
    return vec3(out.origin[0] + float(i * dx), out.origin[1] + float(j * dx), out.origin[2] + float(k * dx));
  };
  const float band = float(3 * dx);
  const CpuExecutor ex(threads);
  ex.for_each(uint32_t(ny * nz), [&](uint32_t row) {
    const int j = int(row) % ny, k = int(row) / ny;
    for (int i = 0; i < nx; ++i) {
      MeshDistance::Closest c;
      const std::size_t id = (std::size_t(k) * ny + j) * nx + i;
      if (dist.closest_within(at(i, j, k), band, c)) {
        out.values[id] = c.distance;
        tri[id] = int32_t(c.triangle);
      }
    }
  });
  std::vector<uint32_t> frontier;
  for (std::size_t id = 0; id < n; ++id)
    if (tri[id] >= 0) frontier.push_back(uint32_t(id));
  if (frontier.empty()) {  // a mesh within no node's band (smaller than a voxel): every node exactly
    ex.for_each(uint32_t(n), [&](uint32_t id) {
      out.values[id] = dist.closest(at(int(id % nx), int(id / nx % ny), int(id / (std::size_t(nx) * ny)))).distance;
    });
    return out;
  }
  // Outward from the band in order of distance (Dijkstra's order, kept in
  // buckets a sixteenth of a voxel wide), so each node is reached first
  // through the neighbours that lie towards its closest feature; it keeps
  // the nearest of the triangles offered to it.
  auto for_neighbours = [&](uint32_t id, auto&& f) {
    const int i = int(id % nx), j = int(id / nx % ny), k = int(id / (std::size_t(nx) * ny));
    for (int dk = -1; dk <= 1; ++dk)
      for (int dj = -1; dj <= 1; ++dj)
        for (int di = -1; di <= 1; ++di) {
          const int a = i + di, b = j + dj, c = k + dk;
          if ((di | dj | dk) == 0 || a < 0 || b < 0 || c < 0 || a >= nx || b >= ny || c >= nz) continue;
          f(uint32_t((std::size_t(c) * ny + b) * nx + a), a, b, c);
        }
  };
  // One record a node, so that a node's 26 neighbours cost a few cache
  // lines, not a few per array.
  struct Far {
    float reach = 1e30f;  // unsigned distance, tentative until done
    int32_t tri = -1;
    uint8_t done = 0, exact = 0, inside = 0;
  };
  std::vector<Far> far(n);
  const float width = float(dx) / 16;
  std::vector<std::vector<uint32_t>> buckets;
  auto push = [&](uint32_t id, std::size_t from) {
    const std::size_t b = std::max(from, std::size_t(far[id].reach / width));
    if (b >= buckets.size()) buckets.resize(b + 1);
    buckets[b].push_back(id);
  };
  for (const uint32_t id : frontier) {
    far[id] = {std::fabs(out.values[id]), tri[id], 0, 1, uint8_t(out.values[id] < 0)};
    push(id, 0);
  }
  std::vector<int32_t>().swap(tri);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    for (std::size_t e = 0; e < buckets[b].size(); ++e) {  // grows while it is read
      const uint32_t id = buckets[b][e];
      if (far[id].done) continue;
      far[id].done = 1;
      const uint8_t inside = far[id].inside;
      const int32_t t = far[id].tri;
      for_neighbours(id, [&](uint32_t m, int i, int j, int k) {
        // The band's nodes are exact already (and an offer equal to theirs,
        // from the far side of an edge, must not give them its sign).
        Far& f = far[m];
        if (f.done || f.exact || f.tri == t) return;
        const float d = dist.distance_to(at(i, j, k), uint32_t(t));
        if (d < f.reach) {
          f.reach = d;
          f.tri = t;
          f.inside = inside;
          push(m, b);
        }
      });
    }
    std::vector<uint32_t>().swap(buckets[b]);
  }
  ex.for_each(uint32_t(n), [&](uint32_t id) {
    if (!far[id].exact) out.values[id] = far[id].inside ? -far[id].reach : far[id].reach;
  });
  return out;
}

Collider grid_collider(const SampledSdf& sdf) {
  Collider c;
  c.type = ShapeType::Grid;
  for (int a = 0; a < 3; ++a) c.grid_dims[a] = sdf.dims[a];
  c.grid_origin = vec3(sdf.origin[0], sdf.origin[1], sdf.origin[2]);
  c.grid_dx = sdf.dx;
  c.grid = sdf.values.data();
  return c;
}

}  // namespace eddy
