#include "geometry.h"

#include <cstdint>
#include <cstring>

#include "eddy/core/error.h"

namespace eddy::app {

namespace {

// Little-endian words into a small owned buffer.
class Words {
 public:
  void u32(uint32_t v) { raw(&v, 4); }
  void f32(float v) { raw(&v, 4); }
  void raw(const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }
  void padded(const std::string& s) {
    raw(s.data(), s.size());
    out.append((4 - s.size() % 4) % 4, '\0');
  }
  std::string out;
};

static_assert(sizeof(Vec3f) == 12, "Vec3f is three packed floats");

void header(Words& w, uint32_t kind) {
  w.raw("EDGY", 4);
  w.u32(1);
  w.u32(kind);
}

}  // namespace

std::string Encoded::str() const {
  std::string s;
  s.reserve(size_);
  for (const auto& [p, n] : parts_) s.append(p, n);
  return s;
}

Encoded encode_points(const Points& pts, const std::vector<std::string>& attributes) {
  std::vector<const Points::Attribute*> chosen;
  if (attributes.empty()) {
    for (const auto& a : pts.attributes())
      if (a.name != "P") chosen.push_back(&a);
  } else {
    for (const auto& name : attributes) {
      if (name == "P") continue;
      const Points::Attribute* a = pts.find(name);
      if (!a) throw Error("the points have no attribute '" + name + "'");
      chosen.push_back(a);
    }
  }
  Encoded e;
  Words w;
  header(w, 1);
  w.u32(uint32_t(pts.size()));
  w.f32(pts.radius);
  w.u32(uint32_t(chosen.size()));
  e.own(std::move(w.out));
  e.view(pts.P(), pts.size() * sizeof(Vec3f));
  for (const Points::Attribute* a : chosen) {
    Words h;
    h.u32(uint32_t(a->name.size()));
    h.padded(a->name);
    h.u32(a->type == AttribType::Float ? 0u : a->type == AttribType::Int ? 1u : 2u);
    e.own(std::move(h.out));
    e.view(pts.data(*a), pts.size() * attrib_size(a->type));
  }
  return e;
}

Encoded encode_mesh(const Mesh& mesh) {
  Encoded e;
  Words w;
  header(w, 2);
  const std::size_t tris = mesh.triangles.size() + 2 * mesh.quads.size();
  const bool normals = mesh.normals.size() == mesh.points.size() && !mesh.points.empty();
  w.u32(uint32_t(mesh.points.size()));
  w.u32(uint32_t(tris));
  w.u32(normals ? 1u : 0u);
  e.own(std::move(w.out));
  e.view(mesh.points.data(), mesh.points.size() * sizeof(Vec3f));
  if (normals) e.view(mesh.normals.data(), mesh.normals.size() * sizeof(Vec3f));
  static_assert(sizeof(mesh.triangles[0]) == 12, "triangles are three packed indices");
  e.view(mesh.triangles.data(), mesh.triangles.size() * 12);
  Words q;
  for (const auto& f : mesh.quads) {
    for (int32_t i : {f[0], f[1], f[2]}) q.u32(uint32_t(i));
    for (int32_t i : {f[0], f[2], f[3]}) q.u32(uint32_t(i));
  }
  e.own(std::move(q.out));
  return e;
}

Encoded encode_colliders(const std::vector<Collider>& shapes) {
  Words w;
  header(w, 3);
  w.u32(uint32_t(shapes.size()));
  for (const Collider& c : shapes) {
    w.u32(uint32_t(c.type));
    w.u32(uint32_t(c.inside));
    w.raw(&c.center, 12);
    w.raw(&c.rotation, 36);
    w.raw(&c.size, 12);
    w.raw(&c.velocity, 12);
    w.raw(&c.grid_origin, 12);
    w.f32(c.grid_dx);
    w.raw(c.grid_dims, 12);
    w.raw(&c.angular_velocity, 12);
  }
  Encoded e;
  e.own(std::move(w.out));
  return e;
}

}  // namespace eddy::app
