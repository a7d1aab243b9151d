#include "eddy/core/mesh.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "eddy/core/error.h"
#include "eddy/core/io.h"

namespace eddy {

namespace {

template <class F>
void for_each_triangle(const Mesh& m, F&& f) {
  for (const auto& t : m.triangles) f(t[0], t[1], t[2]);
  for (const auto& q : m.quads) {
    f(q[0], q[1], q[2]);
    f(q[0], q[2], q[3]);
  }
}

}  // namespace

Mesh box_mesh(Vec3f center, Vec3f half) {
  Mesh m;
  for (int c = 0; c < 8; ++c)
    m.points.push_back(center + vec3(c & 1 ? half.x : -half.x, c & 2 ? half.y : -half.y, c & 4 ? half.z : -half.z));
  const int f[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
  for (const auto& k : f) m.quads.push_back({k[0], k[1], k[2], k[3]});
  return m;
}

Mesh sphere_mesh(float radius, int rings, int segs) {
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

Mesh grid_mesh(Vec3f center, Vec3f u, Vec3f v, int nu, int nv) {
  Mesh m;
  for (int j = 0; j <= nv; ++j)
    for (int i = 0; i <= nu; ++i)
      m.points.push_back(center + u * (float(i) / float(nu) - 0.5f) + v * (float(j) / float(nv) - 0.5f));
  for (int j = 0; j < nv; ++j)
    for (int i = 0; i < nu; ++i) {
      const int32_t q = j * (nu + 1) + i;
      m.quads.push_back({q, q + 1, q + nu + 2, q + nu + 1});
    }
  return m;
}

void compute_point_normals(Mesh& m) {
  std::vector<Vec3f> n(m.points.size(), vec3(0.0f));
  for_each_triangle(m, [&](int a, int b, int c) {
    const Vec3f fn = cross(m.points[b] - m.points[a], m.points[c] - m.points[a]);  // |fn| = 2 area
    n[a] += fn;
    n[b] += fn;
    n[c] += fn;
  });
  for (auto& v : n) v = normalize_or(v, vec3(0, 1, 0));
  m.normals = std::move(n);
}

void flip_winding(Mesh& m) {
  for (auto& t : m.triangles) std::swap(t[1], t[2]);
  for (auto& q : m.quads) std::swap(q[1], q[3]);
  for (auto& n : m.normals) n = -n;
}

void check_mesh(const Mesh& m, const std::string& source) {
  const auto n = int64_t(m.points.size());
  auto check = [&](const int32_t* idx, int k, std::size_t face) {
    for (int i = 0; i < k; ++i)
      if (idx[i] < 0 || idx[i] >= n)
        throw Error(source + ": face " + std::to_string(face) + " refers to point " + std::to_string(idx[i]) +
                    " but the mesh has " + std::to_string(n) + " points");
  };
  for (std::size_t f = 0; f < m.triangles.size(); ++f) check(m.triangles[f].data(), 3, f);
  for (std::size_t f = 0; f < m.quads.size(); ++f) check(m.quads[f].data(), 4, m.triangles.size() + f);
  if (!m.normals.empty() && m.normals.size() != m.points.size())
    throw Error(source + ": " + std::to_string(m.normals.size()) + " normals for " + std::to_string(n) + " points");
  if (!m.velocities.empty() && m.velocities.size() != m.points.size())
    throw Error(source + ": " + std::to_string(m.velocities.size()) + " velocities for " + std::to_string(n) +
                " points");
}

Bounds3 mesh_bounds(const Mesh& m) {
  Bounds3 b = empty_bounds();
  for (const Vec3f& p : m.points) b = {vmin(b.lo, p), vmax(b.hi, p)};
  return b;
}

void require_closed(const Mesh& m, const std::string& name) {
  if (m.face_count() == 0) throw Error(name + " has no faces");
  const MeshStats st = measure_mesh(m);
  if (st.boundary_edges > 0)
    throw Error(name + " is not closed (" + std::to_string(st.boundary_edges) +
                " edges belong to one face only), so it has no inside");
}

MeshStats measure_mesh(const Mesh& m) {
  MeshStats s;
  struct HalfEdge {
    int32_t lo, hi;
    uint32_t face;
    bool forward;  // traversed lo -> hi
  };
  std::vector<HalfEdge> he;
  he.reserve((m.triangles.size() + 2 * m.quads.size()) * 3);
  std::vector<uint8_t> used(m.points.size(), 0);
  double min_angle = M_PI;
  std::size_t slivers = 0;
  uint32_t face = 0;
  for_each_triangle(m, [&](int a, int b, int c) {
    const Vec3f pa = m.points[a], pb = m.points[b], pc = m.points[c];
    // Signed volume by the divergence theorem over tetrahedra with the origin.
    s.volume += double(dot(pa, cross(pb, pc))) / 6.0;
    s.area += 0.5 * double(length(cross(pb - pa, pc - pa)));
    const Vec3f p[3] = {pa, pb, pc};
    double tri_min = M_PI;
    for (int k = 0; k < 3; ++k) {
      const Vec3f u = p[(k + 1) % 3] - p[k], v = p[(k + 2) % 3] - p[k];
      const double lu = length(u), lv = length(v);
      const double ang = (lu > 0 && lv > 0) ? std::acos(std::clamp(double(dot(u, v)) / (lu * lv), -1.0, 1.0)) : 0.0;
      tri_min = std::min(tri_min, ang);
    }
    min_angle = std::min(min_angle, tri_min);
    if (tri_min < 10.0 * M_PI / 180.0) ++slivers;
    const int v[3] = {a, b, c};
    for (int k = 0; k < 3; ++k) {
      const int32_t x = v[k], y = v[(k + 1) % 3];
      he.push_back({std::min(x, y), std::max(x, y), face, x < y});
      used[x] = 1;
    }
    ++face;
  });
  s.triangles = face;
  s.points = std::size_t(std::count(used.begin(), used.end(), uint8_t(1)));
  s.min_angle_deg = face ? min_angle * 180.0 / M_PI : 0.0;
  s.sliver_share = face ? double(slivers) / face : 0.0;
  std::sort(he.begin(), he.end(), [](const HalfEdge& a, const HalfEdge& b) {
    return a.lo != b.lo ? a.lo < b.lo : a.hi != b.hi ? a.hi < b.hi : a.face < b.face;
  });
  // Union-find over faces joined by shared edges.
  std::vector<uint32_t> parent(face);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (std::size_t i = 0; i < he.size();) {
    std::size_t j = i + 1;
    while (j < he.size() && he[j].lo == he[i].lo && he[j].hi == he[i].hi) ++j;
    const std::size_t uses = j - i;
    ++s.edges;
    if (uses == 1) ++s.boundary_edges;
    if (uses >= 3) ++s.nonmanifold_edges;
    if (uses == 2 && he[i].forward == he[i + 1].forward) ++s.inconsistent_edges;
    for (std::size_t k = i + 1; k < j; ++k) parent[find(he[k].face)] = find(he[i].face);
    i = j;
  }
  for (uint32_t f = 0; f < face; ++f)
    if (find(f) == f) ++s.components;
  s.euler = long(s.points) - long(s.edges) + long(face);
  return s;
}

// ---------------------------------------------------------------------------
// OBJ

std::string encode_obj(const Mesh& m) {
  std::string out;
  out.reserve(m.points.size() * 40 + m.face_count() * 24);
  out += "# written by eddy\n";
  char buf[128];
  for (const auto& p : m.points) {
    const int k = std::snprintf(buf, sizeof buf, "v %.9g %.9g %.9g\n", p.x, p.y, p.z);
    out.append(buf, std::size_t(k));
  }
  const bool normals = m.normals.size() == m.points.size() && !m.normals.empty();
  if (normals)
    for (const auto& n : m.normals) {
      const int k = std::snprintf(buf, sizeof buf, "vn %.6g %.6g %.6g\n", n.x, n.y, n.z);
      out.append(buf, std::size_t(k));
    }
  auto corner = [&](int32_t i) {
    const int k = normals ? std::snprintf(buf, sizeof buf, " %d//%d", i + 1, i + 1)
                          : std::snprintf(buf, sizeof buf, " %d", i + 1);
    out.append(buf, std::size_t(k));
  };
  for (const auto& t : m.triangles) {
    out += 'f';
    for (int32_t i : t) corner(i);
    out += '\n';
  }
  for (const auto& q : m.quads) {
    out += 'f';
    for (int32_t i : q) corner(i);
    out += '\n';
  }
  return out;
}

Mesh decode_obj(const std::string& text, const std::string& src) {
  Mesh m;
  std::vector<Vec3f> vn;
  std::vector<int32_t> corner_normal;  // per point: index into vn, -1 none
  std::size_t line_no = 0, pos = 0;
  auto fail = [&](const std::string& what) -> Mesh {
    throw Error(src + ":" + std::to_string(line_no) + ": not a readable OBJ mesh: " + what);
  };
  const char* base = text.data();
  while (pos < text.size()) {
    ++line_no;
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const char* p = base + pos;
    const char* e = base + end;
    pos = end + 1;
    while (p < e && (*p == ' ' || *p == '\t')) ++p;
    if (e > p && e[-1] == '\r') --e;
    if (p == e || *p == '#') continue;
    if (std::memchr(p, '\0', std::size_t(e - p))) return fail("binary data");
    auto skip = [&] {
      while (p < e && (*p == ' ' || *p == '\t')) ++p;
    };
    auto number = [&](float& out) {
      skip();
      auto r = std::from_chars(p, e, out);
      if (r.ec != std::errc()) return false;
      p = r.ptr;
      return true;
    };
    if (e - p >= 2 && p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
      p += 2;
      Vec3f v;
      if (!number(v.x) || !number(v.y) || !number(v.z)) return fail("a vertex needs three numbers");
      if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return fail("a vertex is not finite");
      m.points.push_back(v);
    } else if (e - p >= 3 && p[0] == 'v' && p[1] == 'n' && (p[2] == ' ' || p[2] == '\t')) {
      p += 3;
      Vec3f v;
      if (!number(v.x) || !number(v.y) || !number(v.z)) return fail("a normal needs three numbers");
      vn.push_back(v);
    } else if (e - p >= 2 && p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
      p += 2;
      std::vector<int32_t> idx;
      while (true) {
        skip();
        if (p >= e) break;
        long v = 0;
        auto r = std::from_chars(p, e, v);
        if (r.ec != std::errc()) return fail("a face index is not a number");
        p = r.ptr;
        const long nv = long(m.points.size());
        if (v < 0) v = nv + v + 1;  // relative index
        if (v < 1 || v > nv)
          return fail("face refers to vertex " + std::to_string(v) + " of " + std::to_string(nv));
        long n = 0;
        if (p < e && *p == '/') {
          ++p;
          while (p < e && *p != '/' && *p != ' ' && *p != '\t') ++p;  // texture index: ignored
          if (p < e && *p == '/') {
            ++p;
            auto rn = std::from_chars(p, e, n);
            if (rn.ec != std::errc()) return fail("a face normal index is not a number");
            p = rn.ptr;
            if (n < 0) n = long(vn.size()) + n + 1;
            if (n < 1 || n > long(vn.size()))
              return fail("face refers to normal " + std::to_string(n) + " of " + std::to_string(vn.size()));
          }
        }
        idx.push_back(int32_t(v - 1));
        if (n > 0) {
          corner_normal.resize(m.points.size(), -1);
          corner_normal[std::size_t(v - 1)] = int32_t(n - 1);
        }
      }
      if (idx.size() < 3) return fail("a face needs at least three vertices");
      if (idx.size() == 3) m.triangles.push_back({idx[0], idx[1], idx[2]});
      else if (idx.size() == 4) m.quads.push_back({idx[0], idx[1], idx[2], idx[3]});
      else
        for (std::size_t k = 1; k + 1 < idx.size(); ++k) m.triangles.push_back({idx[0], idx[k], idx[k + 1]});
    }
    // Other statements (vt, o, g, s, usemtl, mtllib, l) carry nothing a mesh value holds.
  }
  if (!corner_normal.empty()) {
    corner_normal.resize(m.points.size(), -1);
    m.normals.assign(m.points.size(), vec3(0, 1, 0));
    for (std::size_t i = 0; i < m.points.size(); ++i)
      if (corner_normal[i] >= 0) m.normals[i] = normalize_or(vn[std::size_t(corner_normal[i])], vec3(0, 1, 0));
  }
  return m;
}

void write_mesh(const std::string& path, const Mesh& m) {
  const std::string ext = lower_extension(path);
  if (ext == ".obj") write_file_atomic(path, encode_obj(m));
  else if (ext == ".ply") write_file_atomic(path, encode_ply_mesh(m));
  else throw Error(path + ": unknown mesh format '" + ext + "' (write .obj or .ply)");
}

Mesh read_mesh(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext != ".obj" && ext != ".ply") throw Error(path + ": unknown mesh format '" + ext + "' (read .obj or .ply)");
  const std::string data = read_file(path, "mesh file");
  Mesh m = ext == ".obj" ? decode_obj(data, path) : decode_ply_mesh(data, path);
  check_mesh(m, path);
  return m;
}

}  // namespace eddy
