#include "geometry.h"

#include <cstdint>
#include <cstring>

#include "eddy/core/error.h"

namespace eddy::app {

namespace {

class Writer {
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

void header(Writer& w, uint32_t kind) {
  w.raw("EDGY", 4);
  w.u32(1);
  w.u32(kind);
}

}  // namespace

std::string encode_points(const Points& pts, const std::vector<std::string>& attributes) {
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
  Writer w;
  header(w, 1);
  w.u32(uint32_t(pts.size()));
  w.f32(pts.radius);
  w.u32(uint32_t(chosen.size()));
  w.raw(pts.P(), pts.size() * sizeof(Vec3f));
  for (const Points::Attribute* a : chosen) {
    w.u32(uint32_t(a->name.size()));
    w.padded(a->name);
    w.u32(a->type == AttribType::Float ? 0u : a->type == AttribType::Int ? 1u : 2u);
    w.raw(pts.data(*a), pts.size() * attrib_size(a->type));
  }
  return std::move(w.out);
}

std::string encode_mesh(const Mesh& mesh) {
  Writer w;
  header(w, 2);
  const std::size_t tris = mesh.triangles.size() + 2 * mesh.quads.size();
  const bool normals = mesh.normals.size() == mesh.points.size() && !mesh.points.empty();
  w.u32(uint32_t(mesh.points.size()));
  w.u32(uint32_t(tris));
  w.u32(normals ? 1u : 0u);
  w.raw(mesh.points.data(), mesh.points.size() * sizeof(Vec3f));
  if (normals) w.raw(mesh.normals.data(), mesh.normals.size() * sizeof(Vec3f));
  for (const auto& t : mesh.triangles)
    for (int32_t i : t) w.u32(uint32_t(i));
  for (const auto& q : mesh.quads) {
    for (int32_t i : {q[0], q[1], q[2]}) w.u32(uint32_t(i));
    for (int32_t i : {q[0], q[2], q[3]}) w.u32(uint32_t(i));
  }
  return std::move(w.out);
}

std::string encode_colliders(const std::vector<Collider>& shapes) {
  Writer w;
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
  }
  return std::move(w.out);
}

}  // namespace eddy::app
